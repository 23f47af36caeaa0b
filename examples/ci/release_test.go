package ci

import (
	"fmt"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestReleaseWorkflow checks release.yml, the workflow that builds and checks every wheel of
// pyinferbench (docs/python.md): it decodes strictly; the build job runs make wheels and checks
// the metadata; the check job installs and tests the wheel of each platform the Makefile builds,
// on a runner of that platform, choosing it by a pattern that matches that platform's wheel tag
// and no other; the sdist is installed with Go; publishing waits for every check and runs on tags.
func TestReleaseWorkflow(t *testing.T) {
	w := loadFile(t, "release.yml")
	build, check, sdist, publish := w.Jobs["build"], w.Jobs["check"], w.Jobs["sdist"], w.Jobs["publish"]
	if len(build.Steps) == 0 || len(check.Steps) == 0 || len(sdist.Steps) == 0 || len(publish.Steps) == 0 {
		t.Fatalf("want jobs build, check, sdist and publish, got %d jobs", len(w.Jobs))
	}
	runs := func(j job) string {
		var b strings.Builder
		for _, s := range j.Steps {
			b.WriteString(s.Run + "\n")
		}
		return b.String()
	}
	if r := runs(build); !strings.Contains(r, "make wheels") || !strings.Contains(r, "twine check --strict dist/wheels/*") {
		t.Errorf("build job: want make wheels and twine check --strict:\n%s", r)
	}
	if up := build.find("actions/upload-artifact"); up == nil || up.with("path") != "dist/wheels" {
		t.Errorf("build job uploads %+v, want dist/wheels", up)
	}

	// Every platform of the Makefile, once, with a wheel pattern that picks its tag only.
	mk, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^PLATFORMS\s*:=\s*(.+)$`).FindSubmatch(mk)
	if m == nil {
		t.Fatal("Makefile: no PLATFORMS line")
	}
	platforms := strings.Fields(string(m[1]))
	tags := map[string]string{ // the tag hatch_build.py gives each platform's wheel
		"linux/amd64":   "pyinferbench-1.0.0-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.musllinux_1_1_x86_64.whl",
		"linux/arm64":   "pyinferbench-1.0.0-py3-none-manylinux_2_17_aarch64.manylinux2014_aarch64.musllinux_1_1_aarch64.whl",
		"darwin/amd64":  "pyinferbench-1.0.0-py3-none-macosx_12_0_x86_64.whl",
		"darwin/arm64":  "pyinferbench-1.0.0-py3-none-macosx_12_0_arm64.whl",
		"windows/amd64": "pyinferbench-1.0.0-py3-none-win_amd64.whl",
		"windows/arm64": "pyinferbench-1.0.0-py3-none-win_arm64.whl",
	}
	if check.Strategy == nil || check.Strategy.FailFast == nil || *check.Strategy.FailFast {
		t.Error("check: want fail-fast: false (one platform's failure must not hide another's)")
	}
	var seen []string
	for _, e := range check.Strategy.Matrix["include"] {
		entry, _ := e.(map[string]any)
		p, pattern, runner := fmt.Sprint(entry["platform"]), fmt.Sprint(entry["wheel"]), fmt.Sprint(entry["runner"])
		seen = append(seen, p)
		for other, name := range tags {
			ok, err := path.Match("pyinferbench-"+pattern, name)
			if err != nil || ok != (other == p) {
				t.Errorf("check %s: wheel pattern %q matches %s's wheel: %v (%v)", p, pattern, other, ok, err)
			}
		}
		os, arch, _ := strings.Cut(p, "/")
		want := map[string]string{"linux": "ubuntu", "darwin": "macos", "windows": "windows"}[os]
		if !strings.HasPrefix(runner, want) || (arch == "arm64") != (strings.Contains(runner, "arm") || runner == "macos-14") {
			t.Errorf("check %s runs on %s", p, runner)
		}
	}
	slices.Sort(seen)
	want := slices.Clone(platforms)
	slices.Sort(want)
	if !slices.Equal(seen, want) {
		t.Errorf("check covers %v, the Makefile builds %v", seen, want)
	}
	if r := runs(check); !strings.Contains(r, "${{ matrix.wheel }}") || !strings.Contains(r, "-m pytest tests") || !strings.Contains(r, "-m inferbench version") {
		t.Errorf("check job: want the matrix's wheel installed, inferbench version and python/tests:\n%s", r)
	}
	if !slices.Contains(check.needs(), "build") || !slices.Contains(sdist.needs(), "build") {
		t.Error("check and sdist must need build")
	}
	if sdist.find("actions/setup-go") == nil || !strings.Contains(runs(sdist), "pip install dist/wheels/pyinferbench-*.tar.gz") {
		t.Error("sdist job: want Go set up and the sdist installed (pip builds the binary with Go)")
	}
	if n := publish.needs(); !slices.Contains(n, "check") || !slices.Contains(n, "sdist") {
		t.Errorf("publish needs %v: want check and sdist (nothing is published unchecked)", n)
	}
	if !strings.Contains(publish.If, "refs/tags/v") || publish.Permissions["id-token"] != "write" || w.Permissions["contents"] != "read" {
		t.Errorf("publish: if %q, permissions %v (want tags only; id-token write for trusted publishing, on that job alone)", publish.If, publish.Permissions)
	}
	if p := publish.find("pypa/gh-action-pypi-publish"); p == nil || !strings.Contains(p.If, "vars.PYPI_PUBLISH") {
		t.Error("publish: PyPI only when vars.PYPI_PUBLISH says so (the name is not published yet)")
	}
}
