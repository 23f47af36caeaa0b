package alert

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"math/big"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/inferbench/inferbench/result"
)

// fakeSMTP is a mail server on loopback for tests: EHLO, STARTTLS (with a certificate made for
// 127.0.0.1), AUTH PLAIN, MAIL, RCPT, DATA and QUIT, enough for net/smtp. It keeps what it was
// sent.
type fakeSMTP struct {
	addr     string
	startTLS bool
	cert     tls.Certificate
	roots    *x509.CertPool

	mu   sync.Mutex
	tls  bool     // the session was upgraded before the login
	auth string   // the AUTH PLAIN credentials, decoded: "\x00user\x00password"
	rcpt []string // RCPT TO addresses
	data string   // the message
}

func startFakeSMTP(t *testing.T, startTLS bool) *fakeSMTP {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(der)
	f := &fakeSMTP{startTLS: startTLS, cert: tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, roots: x509.NewCertPool()}
	f.roots.AddCert(leaf)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	f.addr = ln.Addr().String()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go f.serve(c)
		}
	}()
	return f
}

func (f *fakeSMTP) serve(c net.Conn) {
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	r, w := bufio.NewReader(c), bufio.NewWriter(c)
	say := func(s string) { w.WriteString(s + "\r\n"); w.Flush() }
	say("220 fake ESMTP")
	secure := false
	for range 100 {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		line = strings.TrimRight(line, "\r\n")
		verb := strings.ToUpper(strings.Fields(line + " x")[0])
		switch verb {
		case "EHLO", "HELO":
			if f.startTLS && !secure {
				say("250-fake\r\n250-STARTTLS\r\n250 AUTH PLAIN")
			} else {
				say("250-fake\r\n250 AUTH PLAIN")
			}
		case "STARTTLS":
			say("220 go ahead")
			tc := tls.Server(c, &tls.Config{Certificates: []tls.Certificate{f.cert}})
			if tc.Handshake() != nil {
				return
			}
			c, secure = tc, true
			r, w = bufio.NewReader(tc), bufio.NewWriter(tc)
		case "AUTH":
			parts := strings.Fields(line)
			dec, _ := base64.StdEncoding.DecodeString(parts[len(parts)-1])
			f.mu.Lock()
			f.auth, f.tls = string(dec), secure
			f.mu.Unlock()
			say("235 ok")
		case "MAIL":
			say("250 ok")
		case "RCPT":
			f.mu.Lock()
			f.rcpt = append(f.rcpt, strings.Trim(strings.TrimPrefix(strings.ToUpper(line[:8])+line[8:], "RCPT TO:"), "<>"))
			f.mu.Unlock()
			say("250 ok")
		case "DATA":
			say("354 go")
			var b strings.Builder
			for {
				l, err := r.ReadString('\n')
				if err != nil || l == ".\r\n" {
					break
				}
				b.WriteString(l)
			}
			f.mu.Lock()
			f.data = b.String()
			f.mu.Unlock()
			say("250 queued")
		case "QUIT":
			say("221 bye")
			return
		default:
			say("502 no")
		}
	}
}

// TestMailSTARTTLS: seed 002's email_notification: the firings go to the recipients through the
// server of $INFERBENCH_SMTP_ADDR, upgraded with STARTTLS before the login, with the
// credentials of the environment.
func TestMailSTARTTLS(t *testing.T) {
	srv := startFakeSMTP(t, true)
	env := map[string]string{smtpAddrEnv: srv.addr, smtpUserEnv: "bench", smtpPasswordEnv: "s3cret", smtpFromEnv: "ci@example.com"}
	s, ok, err := smtpFrom(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if !ok || err != nil {
		t.Fatalf("SMTPFrom: %v %v", ok, err)
	}
	s.TLS = &tls.Config{RootCAs: srv.roots, ServerName: "127.0.0.1"}
	run := &result.Run{ID: "20261125_120000-abc"}
	fired := []Firing{{Rule: "memory_mb.max > 100", Action: "email", Message: "llm/default: memory_mb.max = 300 > 100"}}
	if err := mailFirings(t.Context(), s, []string{"dev-team@company.com", "ops@company.com"}, run, fired); err != nil {
		t.Fatal(err)
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if !srv.tls || srv.auth != "\x00bench\x00s3cret" {
		t.Errorf("login over TLS %v with %q", srv.tls, srv.auth)
	}
	if strings.Join(srv.rcpt, ",") != "dev-team@company.com,ops@company.com" {
		t.Errorf("recipients %q", srv.rcpt)
	}
	for _, want := range []string{"Subject: inferbench run 20261125_120000-abc: 1 alert(s)", "- llm/default: memory_mb.max = 300 > 100", "From: ci@example.com"} {
		if !strings.Contains(srv.data, want) {
			t.Errorf("message lacks %q:\n%s", want, srv.data)
		}
	}
	if strings.Contains(srv.data, "s3cret") {
		t.Errorf("the message holds the password")
	}
}

// TestMailRefusesClearText: a server without STARTTLS gets no password, and without
// INFERBENCH_SMTP_STARTTLS=off no message.
func TestMailRefusesClearText(t *testing.T) {
	srv := startFakeSMTP(t, false)
	run, fired := &result.Run{ID: "r"}, []Firing{{Message: "x"}}
	err := mailFirings(t.Context(), smtpConfig{Addr: srv.addr, From: "a@b", User: "u", Password: "p"}, []string{"d@e"}, run, fired)
	if err == nil || !strings.Contains(err.Error(), "STARTTLS") {
		t.Errorf("err = %v: want STARTTLS named", err)
	}
	err = mailFirings(t.Context(), smtpConfig{Addr: srv.addr, From: "a@b", User: "u", Password: "p", NoStartTLS: true}, []string{"d@e"}, run, fired)
	if err == nil || !strings.Contains(err.Error(), "not sent in clear") {
		t.Errorf("err = %v: want the password kept", err)
	}
	if err := mailFirings(t.Context(), smtpConfig{Addr: srv.addr, From: "a@b", NoStartTLS: true}, []string{"d@e"}, run, fired); err != nil {
		t.Errorf("a relay without login, STARTTLS off: %v", err)
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if srv.auth != "" {
		t.Errorf("a password was sent in clear: %q", srv.auth)
	}
}
