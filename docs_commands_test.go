package inferbench

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDocsGoCommands holds the go commands the README, docs/ and docs/measurements/ show to the tree: each package
// path they name (./internal/engine, ./stats/...) exists, and each -run or -bench pattern matches
// a test, benchmark, fuzz target or example of the packages named (issue 42: 29 commands named
// packages that had moved under internal/).
func TestDocsGoCommands(t *testing.T) {
	files := docPages(t)
	command := regexp.MustCompile("go (?:test|run|build|vet|list)\\b[^\\n`]*")
	pkg := regexp.MustCompile(`(?:^|\s)\./([A-Za-z0-9_][A-Za-z0-9_./-]*)`)
	pattern := regexp.MustCompile(`-(?:test\.)?(run|bench)[ =]('[^']*'|"[^"]*"|\S+)`)
	placeholders := map[string]bool{"package": true} // docs/reliability.md: "./package" stands for any
	for _, f := range files {
		doc, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		// In a table a command's | is written \|.
		for _, c := range command.FindAllString(strings.ReplaceAll(string(doc), `\|`, "|"), -1) {
			var dirs []string
			for _, m := range pkg.FindAllStringSubmatch(c, -1) {
				p := strings.TrimSuffix(strings.TrimSuffix(m[1], "..."), "/")
				if placeholders[p] || strings.HasSuffix(p, ".go") || strings.Contains(p, ".test") {
					continue
				}
				if fi, err := os.Stat(p); err != nil || !fi.IsDir() {
					t.Errorf("%s: `%s` names ./%s, which is not a package folder", f, c, p)
					continue
				}
				dirs = append(dirs, p)
			}
			if len(dirs) == 0 || strings.Contains(c, "...") {
				continue
			}
			for _, m := range pattern.FindAllStringSubmatch(c, -1) {
				pat := strings.Trim(m[2], `'"`)
				if pat == "^$" || pat == "." || pat == "X" || pat == "XXX" || pat == "none" || strings.HasPrefix(pat, "-") {
					continue
				}
				first := strings.Split(pat, "/")[0] // subtests: the top-level name
				re, err := regexp.Compile(first)
				if err != nil {
					t.Errorf("%s: `%s`: -%s %q is not a pattern: %v", f, c, m[1], pat, err)
					continue
				}
				if !anyTestMatches(t, dirs, re, m[1]) {
					t.Errorf("%s: `%s`: -%s %q matches no %s in %s", f, c, m[1], pat, map[string]string{"run": "test", "bench": "benchmark"}[m[1]], strings.Join(dirs, ", "))
				}
			}
		}
	}
}

// anyTestMatches reports whether a test (run) or benchmark (bench) function of the packages in
// dirs has a name re matches.
func anyTestMatches(t *testing.T, dirs []string, re *regexp.Regexp, kind string) bool {
	t.Helper()
	prefixes := []string{"Test", "Fuzz", "Example"}
	if kind == "bench" {
		prefixes = []string{"Benchmark"}
	}
	fn := regexp.MustCompile(`(?m)^func ((?:` + strings.Join(prefixes, "|") + `)\w*)\(`)
	for _, d := range dirs {
		tests, _ := filepath.Glob(filepath.Join(d, "*_test.go"))
		for _, f := range tests {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range fn.FindAllStringSubmatch(string(src), -1) {
				if re.MatchString(m[1]) {
					return true
				}
			}
		}
	}
	return false
}
