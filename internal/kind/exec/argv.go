// This file holds the building of a command's argv: a string or a list, run by a shell or not,
// with the scenario's parameters in place of "{name}", quoted where a shell reads them.

package exec

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/kballard/go-shellquote"

	"github.com/inferbench/inferbench/subject"
)

// Argv turns a command (a string or a list) into argv. With shell, it is run by /bin/sh -c.
func Argv(command any, shell bool) ([]string, error) {
	switch v := command.(type) {
	case string:
		if shell {
			return []string{"/bin/sh", "-c", v}, nil
		}
		words, err := shellquote.Split(v)
		if err != nil {
			return nil, fmt.Errorf("command %q: %w", v, err)
		}
		if len(words) == 0 {
			return nil, errors.New("command is empty")
		}
		return words, nil
	case []any:
		argv := make([]string, len(v))
		for i, a := range v {
			argv[i] = fmt.Sprint(a)
		}
		if shell {
			return []string{"/bin/sh", "-c", shellquote.Join(argv...)}, nil
		}
		return argv, nil
	case []string:
		return Argv(toAny(v), shell)
	}
	return nil, fmt.Errorf("command must be a string or a list, not %T", command)
}

// BuildArgv turns a command into argv with the scenario's parameters in place of "{name}". A value
// that lands in a shell's script (`shell: true`, or the argument after `sh -c`) is quoted for
// that shell, so a parameter is always one word of data and never shell syntax: `--set p='x;
// touch F'` passes the string "x; touch F", it does not run touch.
func BuildArgv(command any, shell bool, p subject.Params) ([]string, error) {
	switch v := command.(type) {
	case string:
		if shell {
			return []string{"/bin/sh", "-c", substituteQuoted(v, p)}, nil
		}
	case []any:
		argv := make([]string, len(v))
		for i, a := range v {
			argv[i] = fmt.Sprint(a)
		}
		script := shellScript(argv)
		for i := range argv {
			if i == script {
				argv[i] = substituteQuoted(argv[i], p)
			} else {
				argv[i] = substitute(argv[i], p)
			}
		}
		return Argv(toAny(argv), shell)
	case []string:
		return BuildArgv(toAny(v), shell, p)
	}
	argv, err := Argv(command, shell)
	if err != nil {
		return nil, err
	}
	for i := range argv {
		argv[i] = substitute(argv[i], p)
	}
	return argv, nil
}

// shellScript returns the index of the script in an argv that runs a shell with -c (`sh -c
// 'echo {p}'`), or -1.
func shellScript(argv []string) int {
	if len(argv) < 3 {
		return -1
	}
	switch filepath.Base(argv[0]) {
	case "sh", "bash", "dash", "zsh", "ksh", "ash", "busybox":
	default:
		return -1
	}
	for i := 1; i+1 < len(argv); i++ {
		if argv[i] == "-c" {
			return i + 1
		}
		if !strings.HasPrefix(argv[i], "-") && filepath.Base(argv[0]) != "busybox" {
			return -1
		}
	}
	return -1
}

// substituteQuoted replaces "{name}" in a shell script by the value quoted for the shell (a
// plain word such as 8 or qwen-7b stays as it is).
func substituteQuoted(s string, p subject.Params) string {
	if !strings.Contains(s, "{") {
		return s
	}
	for k, v := range p {
		s = strings.ReplaceAll(s, "{"+k+"}", shellquote.Join(fmt.Sprint(v)))
	}
	return s
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

func substitute(s string, p subject.Params) string {
	if !strings.Contains(s, "{") {
		return s
	}
	for k, v := range p {
		s = strings.ReplaceAll(s, "{"+k+"}", fmt.Sprint(v))
	}
	return s
}
