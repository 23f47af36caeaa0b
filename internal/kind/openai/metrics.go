package openai

import (
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
)

// MetricsURL returns the server's Prometheus endpoint, scraped beside a serving scenario (package
// monitor/scrape): the configuration's metrics_url (explicit), or by default the server's root
// /metrics, where vLLM, SGLang, TGI and llama.cpp serve theirs (not explicit: used only when it
// answers with a known server's metrics). It returns "" when metrics_url is "none".
func (s *Subject) MetricsURL() (u string, explicit bool) {
	switch s.cfg.MetricsURL {
	case "none", "off":
		return "", false
	case "":
	default:
		return s.cfg.MetricsURL, true
	}
	base, err := url.Parse(strings.TrimSuffix(s.cfg.URL, "/"))
	if err != nil {
		return "", false
	}
	base.Path = strings.TrimSuffix(strings.TrimSuffix(base.Path, "/"), "/v1") + "/metrics"
	base.RawQuery, base.Fragment = "", ""
	return base.String(), false
}

var (
	keySeq    atomic.Uint64
	keyPrefix = "inferbench-" + strconv.FormatInt(int64(os.Getpid()), 36) + "-"
)

// idempotencyKey is a key unique to one request of this process: inferbench-PID-INDEX-SEQ, the
// process id and sequence number in base 36. It is built in one allocation, the string.
func idempotencyKey(index int) string {
	var buf [64]byte
	b := append(buf[:0], keyPrefix...)
	b = strconv.AppendInt(b, int64(index), 10)
	b = append(b, '-')
	b = strconv.AppendUint(b, keySeq.Add(1), 36)
	return string(b)
}
