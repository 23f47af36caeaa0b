// Package browsertest runs web/browser/check.mjs in headless Chromium for the report and web
// tests, and skips with the stated reason when the machine cannot.
package browsertest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Result is what check.mjs prints: the pages it visited and every console or page error.
type Result struct {
	Pages []struct {
		Name     string `json:"name"`
		Charts   int    `json:"charts"`
		Rendered int    `json:"rendered"`
		// Drawn holds the titles (aria-label) of the charts drawn.
		Drawn []string `json:"drawn"`
	} `json:"pages"`
	Errors []string `json:"errors"`
}

// Browser is what a browser test runs: node, Chromium, and the web directory holding
// browser/check.mjs and node_modules.
type Browser struct {
	Node, Chromium, WebDir string
}

// Require returns the browser to test with, or skips t with the reason a browser test cannot
// run: -short, no node, no Chromium ($CHROMIUM, else /usr/bin/chromium), or no playwright-core
// under webDir/node_modules.
func Require(t testing.TB, webDir string) Browser {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: no browser")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not found: browser tests need node and web/node_modules (make assets)")
	}
	chromium := os.Getenv("CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	if _, err := os.Stat(chromium); err != nil {
		t.Skipf("%s not found: install Debian's chromium (apt-get install chromium) for browser tests", chromium)
	}
	if _, err := os.Stat(filepath.Join(webDir, "node_modules", "playwright-core")); err != nil {
		t.Skip("web/node_modules/playwright-core absent: run make assets (npm ci in web/)")
	}
	return Browser{Node: node, Chromium: chromium, WebDir: webDir}
}

// Check runs node browser/check.mjs with args and decodes what it prints.
func (b Browser) Check(t testing.TB, args ...string) Result {
	t.Helper()
	cmd := exec.Command(b.Node, append([]string{"browser/check.mjs"}, args...)...)
	cmd.Dir = b.WebDir
	cmd.Env = append(os.Environ(), "CHROMIUM="+b.Chromium)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node browser/check.mjs: %v\n%s", err, out)
	}
	var r Result
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("browser check output: %v\n%s", err, out)
	}
	return r
}

// ShotsDir is where browser tests save screenshots: $INFERBENCH_SHOTS, or a temporary folder.
func ShotsDir(t testing.TB) string {
	if d := os.Getenv("INFERBENCH_SHOTS"); d != "" {
		abs, _ := filepath.Abs(d)
		return abs
	}
	return t.TempDir()
}
