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
	cr := &callgrindReader{c: &p.Chunks[len(p.Chunks)-1], g: newGraph(), names: map[string]string{}, npos: 1}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		cr.line++
		t := strings.TrimSpace(sc.Text())
		if t == "" || t[0] == '#' {
			continue
		}
		var err error
		if key, val, isSpec := strings.Cut(t, "="); isSpec && !strings.ContainsAny(key, " \t") {
			err = cr.spec(key, val)
		} else if k, v, ok := strings.Cut(t, ":"); ok && k != "" && !strings.ContainsAny(k, " \t") && (k[0] < '0' || k[0] > '9') && k[0] != '+' && k[0] != '-' && k[0] != '*' {
			err = cr.header(k, v)
		} else {
			err = cr.costLine(t)
		}
		if err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	// callgrind writes "totals:", the sum of the file's own costs, last: a file without it was
	// cut short (a process killed while callgrind wrote it, a truncated copy), and its missing
	// costs would read as a change.
	switch {
	case cr.totalsLine == 0:
		return fmt.Errorf("no totals: line after line %d: the file was cut short (callgrind writes its totals last); count again", cr.line)
	case cr.self != cr.totals:
		return fmt.Errorf("line %d: totals %d, but the cost lines sum to %d: the file was cut or altered; count again", cr.totalsLine, cr.totals, cr.self)
	}
	cr.g.fold(p.Stacks)
	return nil
}

// callgrindReader is what addCallgrind knows partway through a file: the chunk and call graph
// it adds to, the compressed names defined so far, the header's layout of a cost line, and the
// function and call the cost lines are of.
type callgrindReader struct {
	c     *Chunk
	g     *graph
	names map[string]string
	npos  int    // positions per cost line ("positions: instr line" gives 2)
	event int    // index of Ir among the events
	fn    string // current function
	cfn   string // target of the next calls= line
	// inCall says the next cost line is the inclusive cost of a call of cfn, made callCount
	// times.
	inCall    bool
	callCount float64
	// self is the file's own costs summed, totals its totals: line, at totalsLine.
	self, totals uint64
	totalsLine   int
	line         int // the line read last
}

// resolve returns the function name v gives, defining or reusing a compression id, without
// its recursion suffix.
func (cr *callgrindReader) resolve(v string) (string, error) {
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
		cr.names[id] = rest
		return rest, nil
	}
	n, ok := cr.names[id]
	if !ok {
		return "", fmt.Errorf("name %q: compression id used before it is defined", v)
	}
	return n, nil
}

// spec reads a specification line, key=val: the function (fn) the cost lines below are of, or
// a call (cfn, calls) the next cost line is the cost of.
func (cr *callgrindReader) spec(key, val string) error {
	var err error
	switch key {
	case "fn":
		cr.fn, err = cr.resolve(val)
	case "cfn":
		cr.cfn, err = cr.resolve(val)
	case "calls":
		cr.inCall = true
		if f := strings.Fields(val); len(f) > 0 {
			var n uint64
			if n, err = parseCost(f[0]); err != nil {
				err = fmt.Errorf("call count %q: %w", f[0], err)
			}
			cr.callCount = float64(n)
		}
	}
	if err != nil {
		return fmt.Errorf("line %d: %w", cr.line, err)
	}
	return nil // ob, fl, fi, fe, cob, cfi, cfl, jump, jcnd: not needed per function
}

// header reads a header line, k: v: the positions and events of a cost line, and the totals.
func (cr *callgrindReader) header(k, v string) error {
	switch k {
	case "positions":
		cr.npos = len(strings.Fields(v))
	case "events":
		for i, e := range strings.Fields(v) {
			if e == "Ir" {
				cr.event = i
			}
		}
	case "totals":
		f := strings.Fields(v)
		cr.totals = 0 // trailing zeros are left out
		if cr.event < len(f) {
			var err error
			if cr.totals, err = parseCost(f[cr.event]); err != nil {
				return fmt.Errorf("line %d: totals %q: %w", cr.line, f[cr.event], err)
			}
		}
		cr.totalsLine = cr.line
	}
	return nil
}

// costLine reads a cost line, positions then costs: the current function's own cost, or after
// a calls= line the call's inclusive cost.
func (cr *callgrindReader) costLine(t string) error {
	c, g, fn, line := cr.c, cr.g, cr.fn, cr.line
	f := strings.Fields(t)
	cost := 0.0
	if i := cr.npos + cr.event; i < len(f) {
		n, err := parseCost(f[i])
		if err != nil {
			return fmt.Errorf("line %d: cost %q: %w", line, f[i], err)
		}
		cost = float64(n)
		if !cr.inCall {
			if cr.self += n; cr.self > MaxCost {
				return fmt.Errorf("line %d: the costs sum to over %d, the most a count can be", line, uint64(MaxCost))
			}
		}
	}
	if fn == "" {
		return fmt.Errorf("line %d: a cost line before any fn=", line)
	}
	if cr.inCall {
		cr.inCall = false
		if cr.cfn == "" {
			return fmt.Errorf("line %d: calls= without cfn=", line)
		}
		if cr.cfn != fn { // a recursive call's cost is already the function's own
			c.Incl[fn] += cost
			g.incl[fn] += cost
			g.edge(fn, cr.cfn, cost)
		}
		c.Count[cr.cfn] += cr.callCount
		return nil
	}
	c.Self[fn] += cost
	c.Incl[fn] += cost
	g.self[fn] += cost
	g.incl[fn] += cost
	return nil
}
