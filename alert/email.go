package alert

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/smtp"
	"os"
	"strings"
	"time"

	"github.com/inferbench/inferbench/result"
)

// The variables an email alert's server is read from. Nothing else configures it: the password
// is never a flag, never in a file inferbench reads, never written anywhere.
const (
	smtpAddrEnv     = "INFERBENCH_SMTP_ADDR"     // host:port, e.g. smtp.example.com:587
	smtpFromEnv     = "INFERBENCH_SMTP_FROM"     // the sender (default inferbench@HOSTNAME)
	smtpUserEnv     = "INFERBENCH_SMTP_USER"     // the login, when the server wants one
	smtpPasswordEnv = "INFERBENCH_SMTP_PASSWORD" // its password
	smtpStartTLSEnv = "INFERBENCH_SMTP_STARTTLS" // "off" sends without STARTTLS (a relay on loopback)
)

// smtpConfig is the mail server email alerts go through.
type smtpConfig struct {
	Addr, From     string
	User, Password string
	// NoStartTLS sends over a plain connection when the server offers no STARTTLS; otherwise a
	// server without it is refused, and a password is never sent in clear.
	NoStartTLS bool
	// TLS configures STARTTLS; nil verifies the server's certificate against the system's roots
	// for the host of Addr.
	TLS *tls.Config
	// Timeout bounds the whole delivery: connection, STARTTLS, login and message (DefaultTimeout
	// when 0).
	Timeout time.Duration
}

// smtpFrom reads the mail server from the environment through lookup. ok is false when
// $INFERBENCH_SMTP_ADDR is not set.
func smtpFrom(lookup func(string) (string, bool)) (s smtpConfig, ok bool, err error) {
	get := func(k string) string { v, _ := lookup(k); return strings.TrimSpace(v) }
	s.Addr = get(smtpAddrEnv)
	if s.Addr == "" {
		return s, false, nil
	}
	if _, _, err := net.SplitHostPort(s.Addr); err != nil {
		return s, true, fmt.Errorf("%s=%q: want host:port, e.g. smtp.example.com:587", smtpAddrEnv, s.Addr)
	}
	s.From, s.User = get(smtpFromEnv), get(smtpUserEnv)
	s.Password, _ = lookup(smtpPasswordEnv)
	if s.From == "" {
		host, _ := os.Hostname()
		s.From = "inferbench@" + host
	}
	switch v := strings.ToLower(get(smtpStartTLSEnv)); v {
	case "", "on", "1", "true":
	case "off", "0", "false":
		s.NoStartTLS = true
	default:
		return s, true, fmt.Errorf("%s=%q: want on or off", smtpStartTLSEnv, v)
	}
	if s.Timeout, err = alertTimeout(lookup); err != nil {
		return s, true, err
	}
	return s, true, nil
}

// mailFirings sends the firings to the recipients in one message through the server. Like postWebhook, it
// returns the error for the caller to report and never fails a run.
func mailFirings(ctx context.Context, s smtpConfig, to []string, run *result.Run, fired []Firing) error {
	if len(fired) == 0 || len(to) == 0 {
		return nil
	}
	err := mail(ctx, s, to, message(s.From, to, run, fired))
	if err != nil {
		return fmt.Errorf("alert email via %s: %w", s.Addr, err)
	}
	return nil
}

func mail(ctx context.Context, s smtpConfig, to []string, msg []byte) error {
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = defaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	host, _, _ := net.SplitHostPort(s.Addr)
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", s.Addr)
	if err != nil {
		return err
	}
	deadline, _ := ctx.Deadline()
	conn.SetDeadline(deadline) // every read and write of the exchange, not only the dial
	c, err := smtp.NewClient(conn, host)
	if err != nil {
		conn.Close()
		return err
	}
	defer c.Close()
	if err := c.Hello("inferbench"); err != nil {
		return err
	}
	if ok, _ := c.Extension("STARTTLS"); ok {
		cfg := s.TLS
		if cfg == nil {
			cfg = &tls.Config{ServerName: host}
		}
		if err := c.StartTLS(cfg); err != nil {
			return fmt.Errorf("STARTTLS: %w", err)
		}
	} else if !s.NoStartTLS {
		return fmt.Errorf("the server offers no STARTTLS (set %s=off to send in clear, without a password)", smtpStartTLSEnv)
	} else if s.User != "" {
		return errors.New("the server offers no STARTTLS: the password is not sent in clear")
	}
	if s.User != "" {
		if err := c.Auth(smtp.PlainAuth("", s.User, s.Password, host)); err != nil {
			return fmt.Errorf("login as %s: %w", s.User, err)
		}
	}
	if err := c.Mail(s.From); err != nil {
		return err
	}
	for _, r := range to {
		if err := c.Rcpt(r); err != nil {
			return fmt.Errorf("recipient %s: %w", r, err)
		}
	}
	w, err := c.Data()
	if err != nil {
		return err
	}
	if _, err := w.Write(msg); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	return c.Quit()
}

// message is the email: a subject naming the run and the count, a line per firing.
func message(from string, to []string, run *result.Run, fired []Firing) []byte {
	var b strings.Builder
	clean := func(s string) string { return strings.NewReplacer("\r", " ", "\n", " ").Replace(s) }
	fmt.Fprintf(&b, "From: %s\r\nTo: %s\r\n", clean(from), clean(strings.Join(to, ", ")))
	fmt.Fprintf(&b, "Subject: inferbench run %s: %d alert(s)\r\n", clean(run.ID), len(fired))
	fmt.Fprintf(&b, "Date: %s\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n", time.Now().Format(time.RFC1123Z))
	fmt.Fprintf(&b, "inferbench run %s: %d alert(s)\r\n\r\n", clean(run.ID), len(fired))
	for i, f := range fired {
		if i == 100 {
			fmt.Fprintf(&b, "... and %d more\r\n", len(fired)-100)
			break
		}
		fmt.Fprintf(&b, "- %s\r\n", clean(f.Message))
	}
	return []byte(b.String())
}
