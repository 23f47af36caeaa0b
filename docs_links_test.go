package inferbench

import (
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// docPages are the pages of user documentation: the README, docs/ and docs/measurements/.
func docPages(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, pattern := range []string{"docs/*.md", "docs/measurements/*.md"} {
		m, err := filepath.Glob(filepath.FromSlash(pattern))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	return append(files, "README.md")
}

// TestDocsLinks holds the links between the documentation's pages: each relative link of the
// README, docs/*.md and docs/measurements/*.md names a file or folder of the repository that
// exists, and each #anchor (on the same page or another .md page) a heading of its target, as
// GitHub makes an anchor of a heading. Links inside code are not links; a link that leaves the
// repository (../shared/...) is not checked, since the repository cannot say what is there.
func TestDocsLinks(t *testing.T) {
	root, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	link := regexp.MustCompile(`\]\(([^()\s]+)(?:\s+"[^"]*")?\)`)
	anchors := map[string]map[string]bool{} // by page, cleaned path
	anchorsOf := func(page string) map[string]bool {
		if a, ok := anchors[page]; ok {
			return a
		}
		src, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		anchors[page] = headingAnchors(string(src))
		return anchors[page]
	}
	for _, page := range docPages(t) {
		src, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for n, line := range strings.Split(withoutCode(string(src)), "\n") {
			for _, m := range link.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, ":") && !strings.HasPrefix(target, "#") {
					continue // https:, mailto:
				}
				file, anchor, _ := strings.Cut(target, "#")
				dest := page
				if file != "" {
					dest = filepath.Join(filepath.Dir(page), filepath.FromSlash(file))
					abs, _ := filepath.Abs(dest)
					if rel, err := filepath.Rel(root, abs); err != nil || strings.HasPrefix(rel, "..") {
						continue // outside the repository
					}
					if _, err := os.Stat(dest); err != nil {
						t.Errorf("%s:%d: link %q: %s does not exist", page, n+1, target, dest)
						continue
					}
				}
				if anchor == "" || !strings.HasSuffix(dest, ".md") {
					continue
				}
				if !anchorsOf(filepath.Clean(dest))[anchor] {
					t.Errorf("%s:%d: link %q: %s has no heading whose anchor is #%s (its anchors: %s)",
						page, n+1, target, dest, anchor, strings.Join(slices.Sorted(maps.Keys(anchorsOf(filepath.Clean(dest)))), " "))
				}
			}
		}
	}
}

// withoutCode blanks a page's fenced code blocks and inline code spans, keeping its lines.
func withoutCode(src string) string {
	lines := strings.Split(src, "\n")
	fence := false
	span := regexp.MustCompile("`[^`]*`")
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fence = !fence
			lines[i] = ""
			continue
		}
		if fence {
			lines[i] = ""
			continue
		}
		lines[i] = span.ReplaceAllString(l, "``")
	}
	return strings.Join(lines, "\n")
}

// headingAnchors returns the anchors GitHub gives a page's headings: the heading's text in lower
// case, without its markup and punctuation (hyphens and underscores kept), spaces made hyphens,
// a repeated anchor numbered -1, -2, ...
func headingAnchors(src string) map[string]bool {
	linkText := regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
	seen := map[string]int{}
	out := map[string]bool{}
	fence := false
	for _, l := range strings.Split(src, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fence = !fence
			continue
		}
		if fence || !strings.HasPrefix(l, "#") {
			continue
		}
		text := strings.TrimSpace(strings.TrimLeft(l, "#"))
		if len(text) == len(strings.TrimSpace(l)) || !strings.HasPrefix(strings.TrimLeft(l, "#"), " ") {
			continue // not a heading: "#" not followed by a space
		}
		text = linkText.ReplaceAllString(text, "$1")
		var b strings.Builder
		for _, r := range strings.ToLower(text) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if k := seen[a]; k > 0 {
			out[a+"-"+strconv.Itoa(k)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

// TestDocsPageLength holds every page of docs/ and docs/measurements/ (and the README) to 400
// lines: a page longer than that is a notebook or two pages, and its history belongs in the
// commit log. The exceptions are pages another change is rewriting; remove each once it is
// under the bound.
func TestDocsPageLength(t *testing.T) {
	const most = 400
	exceptions := map[string]string{} // page -> why, while another change rewrites it (none now)
	for _, page := range docPages(t) {
		src, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		n := strings.Count(string(src), "\n")
		if !strings.HasSuffix(string(src), "\n") && len(src) > 0 {
			n++
		}
		if why, ok := exceptions[filepath.ToSlash(page)]; ok {
			if n <= most {
				t.Logf("%s has %d lines: its exception (%s) can go", page, n, why)
			}
			continue
		}
		if n > most {
			t.Errorf("%s has %d lines, more than %d: say what the command does, how to use it and what it guarantees, put measured figures in docs/measurements/, and leave the history to the commit log", page, n, most)
		}
	}
}
