package explain

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// callgrind reads valgrind's callgrind format
// (https://valgrind.org/docs/manual/cl-format.html): "fn=" starts a function's cost lines, whose
// costs are its own; "cfn=" and "calls=COUNT TARGET" announce a call, and the cost line right
// after it is the call's inclusive cost, added to the caller's inclusive cost. Names may be
// compressed: "(id) name" defines id, "(id)" reuses it, one table for functions (fn, cfn), one
// for files (fl, fi, fe, cfi, cfl) and one for objects (ob, cob).

// recursion is the suffix callgrind gives a function's recursive levels ("fib'2",
// --separate-recs): the levels are one function here.
var recursion = regexp.MustCompile(`'[0-9]+$`)

// parseCost reads a cost or a call count: callgrind writes unsigned integers, and explain adds
// them as float64, exact up to MaxCost.
func parseCost(s string) (uint64, error) {
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, errors.New("not a count (an unsigned integer)")
	}
	if n > MaxCost {
		return 0, fmt.Errorf("over %d, the most a count can be", uint64(MaxCost))
	}
	return n, nil
}

// addCallgrind reads one callgrind file into the profile's last chunk: the files of one
// measured iteration (the command's process and those it started) are together one call.
func (p *Profile) addCallgrind(r io.Reader) error {
	if len(p.Chunks) == 0 {
		p.Chunks = append(p.Chunks, newChunk(1))
	}
	c := &p.Chunks[len(p.Chunks)-1]
	g := newGraph()
	names := map[string]string{}
	resolve := func(v string) (string, error) {
		v = strings.TrimSpace(v)
		if !strings.HasPrefix(v, "(") {
			return recursion.ReplaceAllString(v, ""), nil
		}
		end := strings.IndexByte(v, ')')
		if end < 2 || strings.Trim(v[1:end], "0123456789") != "" {
			return recursion.ReplaceAllString(v, ""), nil // a name in parentheses: "(below main)"
		}
		id, rest := v[1:end], strings.TrimSpace(v[end+1:])
		if rest != "" {
			rest = recursion.ReplaceAllString(rest, "")
			names[id] = rest
			return rest, nil
		}
		n, ok := names[id]
		if !ok {
			return "", fmt.Errorf("name %q: compression id used before it is defined", v)
		}
		return n, nil
	}
	npos := 1  // positions per cost line ("positions: instr line" gives 2)
	event := 0 // index of Ir among the events
	fn := ""   // current function
	cfn := ""  // target of the next calls= line
	inCall := false
	callCount := 0.0
	var self, totals uint64 // the file's own costs summed, and its totals: line
	totalsLine := 0
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	line := 0
	for sc.Scan() {
		line++
		t := strings.TrimSpace(sc.Text())
		if t == "" || t[0] == '#' {
			continue
		}
		key, val, isSpec := strings.Cut(t, "=")
		if isSpec && !strings.ContainsAny(key, " \t") {
			var err error
			switch key {
			case "fn":
				fn, err = resolve(val)
			case "cfn":
				cfn, err = resolve(val)
			case "calls":
				inCall = true
				if f := strings.Fields(val); len(f) > 0 {
					var n uint64
					if n, err = parseCost(f[0]); err != nil {
						err = fmt.Errorf("call count %q: %w", f[0], err)
					}
					callCount = float64(n)
				}
			}
			if err != nil {
				return fmt.Errorf("line %d: %w", line, err)
			}
			continue // ob, fl, fi, fe, cob, cfi, cfl, jump, jcnd: not needed per function
		}
		if k, v, ok := strings.Cut(t, ":"); ok && k != "" && !strings.ContainsAny(k, " \t") && (k[0] < '0' || k[0] > '9') && k[0] != '+' && k[0] != '-' && k[0] != '*' {
			switch k {
			case "positions":
				npos = len(strings.Fields(v))
			case "events":
				for i, e := range strings.Fields(v) {
					if e == "Ir" {
						event = i
					}
				}
			case "totals":
				f := strings.Fields(v)
				totals = 0 // trailing zeros are left out
				if event < len(f) {
					var err error
					if totals, err = parseCost(f[event]); err != nil {
						return fmt.Errorf("line %d: totals %q: %w", line, f[event], err)
					}
				}
				totalsLine = line
			}
			continue
		}
		// A cost line: positions, then costs.
		f := strings.Fields(t)
		cost := 0.0
		if i := npos + event; i < len(f) {
			n, err := parseCost(f[i])
			if err != nil {
				return fmt.Errorf("line %d: cost %q: %w", line, f[i], err)
			}
			cost = float64(n)
			if !inCall {
				if self += n; self > MaxCost {
					return fmt.Errorf("line %d: the costs sum to over %d, the most a count can be", line, uint64(MaxCost))
				}
			}
		}
		if fn == "" {
			return fmt.Errorf("line %d: a cost line before any fn=", line)
		}
		if inCall {
			inCall = false
			if cfn == "" {
				return fmt.Errorf("line %d: calls= without cfn=", line)
			}
			if cfn != fn { // a recursive call's cost is already the function's own
				c.Incl[fn] += cost
				g.incl[fn] += cost
				g.edge(fn, cfn, cost)
			}
			c.Count[cfn] += callCount
			continue
		}
		c.Self[fn] += cost
		c.Incl[fn] += cost
		g.self[fn] += cost
		g.incl[fn] += cost
	}
	if err := sc.Err(); err != nil {
		return err
	}
	// callgrind writes "totals:", the sum of the file's own costs, last: a file without it was
	// cut short (a process killed while callgrind wrote it, a truncated copy), and its missing
	// costs would read as a change.
	switch {
	case totalsLine == 0:
		return fmt.Errorf("no totals: line after line %d: the file was cut short (callgrind writes its totals last); count again", line)
	case self != totals:
		return fmt.Errorf("line %d: totals %d, but the cost lines sum to %d: the file was cut or altered; count again", totalsLine, totals, self)
	}
	g.fold(p.Stacks)
	return nil
}
