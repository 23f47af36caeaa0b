package alert

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/inferbench/inferbench/result"
)

// Deliver sends the firings of run where their rules say: to the webhook whose URL is in the
// environment variable webhookEnv (Post), or, for the rules whose action is email, by mail to
// their recipients through the server SMTPFrom reads (Mail); lookup reads the environment. It
// returns a problem per delivery that could not be made or failed, in order; none stops the
// others, and the caller must not fail the run on them.
func Deliver(ctx context.Context, lookup func(string) (string, bool), webhookEnv string, run *result.Run, fired []Firing) []error {
	var hook []Firing
	mails := map[string][]Firing{} // recipients -> their firings
	var lists []string
	for _, f := range fired {
		if f.Action != "email" {
			hook = append(hook, f)
			continue
		}
		to := strings.Join(f.To, ",")
		if _, ok := mails[to]; !ok {
			lists = append(lists, to)
		}
		mails[to] = append(mails[to], f)
	}
	var errs []error
	if len(hook) > 0 {
		errs = deliverHook(ctx, lookup, webhookEnv, run, hook)
	}
	if len(lists) == 0 {
		return errs
	}
	s, ok, err := smtpFrom(lookup)
	switch {
	case err != nil:
		return append(errs, fmt.Errorf("alert emails not sent: %w", err))
	case !ok:
		return append(errs, fmt.Errorf("email alerts fired but $%s is not set: nothing sent", smtpAddrEnv))
	}
	for _, to := range lists {
		if err := mailFirings(ctx, s, strings.Split(to, ","), run, mails[to]); err != nil {
			errs = append(errs, fmt.Errorf("alerts not delivered: %w", err))
		}
	}
	return errs
}

// deliverHook posts the firings to the webhook of $webhookEnv, within the alerts' deadline.
func deliverHook(ctx context.Context, lookup func(string) (string, bool), webhookEnv string, run *result.Run, fired []Firing) []error {
	url, _ := lookup(webhookEnv)
	if url == "" {
		return []error{fmt.Errorf("%d alert(s) fired but $%s is not set: nothing posted", len(fired), webhookEnv)}
	}
	var errs []error
	timeout, err := alertTimeout(lookup)
	if err != nil {
		errs = append(errs, fmt.Errorf("%w (using %v instead)", err, defaultTimeout))
		timeout = defaultTimeout
	}
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := postWebhook(pctx, &http.Client{Timeout: timeout}, url, run, fired); err != nil {
		errs = append(errs, fmt.Errorf("alerts not delivered: %w", err))
	}
	return errs
}
