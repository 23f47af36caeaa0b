package cli

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// The annotations that give a flag its place in --help and the flags it works with.
const (
	groupKey   = "inferbench/group"    // on a flag: its group's title and its position in the group
	needsKey   = "inferbench/needs"    // on a flag: the flags one of which it works only with
	aliasKey   = "inferbench/alias-of" // on a flag: the flag it is another name of
	groupsKey  = "inferbench/groups"   // on a command: its group titles, in --help's order, one a line
	ungrouped  = "Flags"               // --help's heading of --help itself (and --version)
	groupsSepr = "\n"
)

// flagGroup is a heading of a command's --help and the flags listed under it, in that order.
type flagGroup struct {
	title string
	flags []string
}

// groupFlags lists each flag of the command under its group's heading in --help, the groups in
// the order given; an alias goes with the flag it names, right after it. A flag named here that
// the command lacks is a programming error.
//
// Note: pflag has no groups and cobra groups only commands, so the groups are flag annotations
// read by usage, the one usage function of every command.
func groupFlags(c *cobra.Command, groups ...flagGroup) {
	titles := make([]string, len(groups))
	pos := 0
	for i, g := range groups {
		titles[i] = g.title
		for _, name := range g.flags {
			pos++
			annotate(flagOf(c, name), groupKey, g.title, strconv.Itoa(pos*2))
		}
	}
	c.Flags().VisitAll(func(fl *pflag.Flag) {
		of := fl.Annotations[aliasKey]
		if len(of) == 0 || fl.Annotations[groupKey] != nil {
			return
		}
		if g := flagOf(c, of[0]).Annotations[groupKey]; len(g) == 2 {
			n, _ := strconv.Atoi(g[1])
			annotate(fl, groupKey, g[0], strconv.Itoa(n+1))
		}
	})
	if c.Annotations == nil {
		c.Annotations = map[string]string{}
	}
	c.Annotations[groupsKey] = strings.Join(titles, groupsSepr)
}

// need says that each of flags works only with one of with.
type need struct {
	flags []string
	with  []string
}

// needFlags declares the flags of the command that work only with others; checkNeeds refuses
// them alone. Each one's help says so ("with --openai: ..."); a test holds it to that.
func needFlags(c *cobra.Command, needs ...need) {
	for _, n := range needs {
		for _, name := range n.flags {
			annotate(flagOf(c, name), needsKey, n.with...)
		}
	}
}

// flagOf is the command's flag of this name, its own or persistent; one it lacks is a
// programming error.
func flagOf(c *cobra.Command, name string) *pflag.Flag {
	fl := c.Flags().Lookup(name)
	if fl == nil {
		fl = c.PersistentFlags().Lookup(name)
	}
	if fl == nil {
		panic(fmt.Sprintf("%s has no --%s", c.CommandPath(), name))
	}
	return fl
}

func annotate(fl *pflag.Flag, key string, vals ...string) {
	if fl.Annotations == nil {
		fl.Annotations = map[string][]string{}
	}
	fl.Annotations[key] = vals
}

// checkNeeds refuses a flag given without any of the flags it works with (needFlags), naming
// them: "--max-tokens needs --openai".
func checkNeeds(c *cobra.Command) error {
	var err error
	c.Flags().VisitAll(func(fl *pflag.Flag) {
		with := fl.Annotations[needsKey]
		if err != nil || !fl.Changed || len(with) == 0 {
			return
		}
		for _, w := range with {
			if g := c.Flags().Lookup(w); g != nil && g.Changed {
				return
			}
		}
		err = usageErr("--%s needs %s (see '%s --help')", fl.Name, orList(with), c.CommandPath())
	})
	return err
}

// orList writes flag names as "--a", "--a or --b", "--a, --b or --c".
func orList(names []string) string {
	s := make([]string, len(names))
	for i, n := range names {
		s[i] = "--" + n
	}
	return orWords(s)
}

// usage writes a command's usage as cobra's default does, but its flags in their groups
// (groupFlags) instead of one alphabetical list.
func usage(c *cobra.Command) error {
	w := c.OutOrStderr()
	fmt.Fprint(w, "Usage:")
	if c.Runnable() {
		fmt.Fprintf(w, "\n  %s", c.UseLine())
	}
	if c.HasAvailableSubCommands() {
		fmt.Fprintf(w, "\n  %s [command]", c.CommandPath())
	}
	if len(c.Aliases) > 0 {
		fmt.Fprintf(w, "\n\nAliases:\n  %s", c.NameAndAliases())
	}
	if c.HasExample() {
		fmt.Fprintf(w, "\n\nExamples:\n%s", c.Example)
	}
	if c.HasAvailableSubCommands() {
		fmt.Fprintf(w, "\n\nAvailable Commands:")
		for _, s := range c.Commands() {
			if s.IsAvailableCommand() || s.Name() == "help" {
				fmt.Fprintf(w, "\n  %-*s %s", s.NamePadding(), s.Name(), s.Short)
			}
		}
	}
	writeFlagGroups(w, c)
	if c.HasAvailableSubCommands() {
		fmt.Fprintf(w, "\n\nUse \"%s [command] --help\" for more information about a command.", c.CommandPath())
	}
	fmt.Fprintln(w)
	return nil
}

// writeFlagGroups writes the command's flags, its own and those it inherits, under their groups'
// headings; the flags of no group (--help) come last, under "Flags".
func writeFlagGroups(w io.Writer, c *cobra.Command) {
	var titles []string
	for p := c; p != nil; p = p.Parent() { // a parent's persistent flags are grouped there
		for _, t := range strings.Split(p.Annotations[groupsKey], groupsSepr) {
			if t != "" && !slices.Contains(titles, t) {
				titles = append(titles, t)
			}
		}
	}
	type entry struct {
		pos int
		fl  *pflag.Flag
	}
	byGroup := map[string][]entry{}
	add := func(fl *pflag.Flag) {
		if fl.Hidden {
			return
		}
		title, pos := ungrouped, 0
		if g := fl.Annotations[groupKey]; len(g) == 2 {
			title = g[0]
			pos, _ = strconv.Atoi(g[1])
		}
		byGroup[title] = append(byGroup[title], entry{pos, fl})
	}
	c.LocalFlags().VisitAll(add)
	c.InheritedFlags().VisitAll(add)
	for _, t := range append(titles, ungrouped) {
		es := byGroup[t]
		if len(es) == 0 {
			continue
		}
		slices.SortStableFunc(es, func(a, b entry) int { return a.pos - b.pos })
		fs := pflag.NewFlagSet(t, pflag.ContinueOnError)
		fs.SortFlags = false
		for _, e := range es {
			fs.AddFlag(e.fl)
		}
		fmt.Fprintf(w, "\n\n%s:\n%s", t, strings.TrimRight(fs.FlagUsages(), " \t\n"))
	}
}
