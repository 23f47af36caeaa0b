package engine

import (
	"strings"

	"github.com/inferbench/inferbench/internal/figures"
	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/result"
)

// reported holds what serving drivers report beside the calls (load.Reporter): goodput, schedule
// lag, the client's CPU, sweep steps and warnings.
type reported struct {
	values   map[string]float64
	order    []string
	extra    map[string]any
	warnings []string
}

// Value implements load.Reporter.
func (c *collector) Value(name string, v float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rep.values == nil {
		c.rep.values = map[string]float64{}
	}
	if _, seen := c.rep.values[name]; !seen {
		c.rep.order = append(c.rep.order, name)
	}
	c.rep.values[name] = v
}

// Extra implements load.Reporter.
func (c *collector) Extra(section string, v any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rep.extra == nil {
		c.rep.extra = map[string]any{}
	}
	c.rep.extra[section] = v
}

// Warn implements load.Reporter.
func (c *collector) Warn(msg string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rep.warnings = append(c.rep.warnings, msg)
}

// fill adds the reported figures to r; the caller holds c.mu.
func (rp *reported) fill(r *result.Scenario) {
	for _, name := range rp.order {
		setValue(r, name, rp.values[name])
	}
	for k, v := range rp.extra {
		if err := r.Extra.Set(k, v); err != nil {
			r.Warnings = append(r.Warnings, err.Error())
		}
	}
	r.Warnings = append(r.Warnings, rp.warnings...)
	if r.Extra.ClientBound {
		// Beside every figure the client's limits may have set (figures.Tainted).
		for _, name := range figures.Tainted {
			if m, ok := r.Metrics[name]; ok {
				m.Note = strings.TrimPrefix(m.Note+"; "+figures.TaintNote, "; ")
				r.Metrics[name] = m
			}
		}
	}
}

var _ load.Reporter = (*collector)(nil)
