package suite

import (
	"fmt"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/lexer"
	"github.com/goccy/go-yaml/token"
)

// Bounds on a definition file. Definitions are written by hand: these are far above any real one
// and keep a hostile or generated file from taking unbounded memory or time.
const (
	// maxFileSize bounds a definition file's size in bytes.
	maxFileSize = 4 << 20
	// maxDepth bounds the nesting of mappings and lists (the YAML parser recurses on it).
	maxDepth = 64
	// maxKeys bounds the keys of one block mapping: the YAML parser's time grows with the square
	// of a block mapping's keys, so this bound keeps parse time linear in the file's size.
	maxKeys = 1000
	// maxNodes bounds the values a document's aliases stand for once expanded (a "billion laughs"
	// file is a few lines that expand to millions).
	maxNodes = 100_000
	// MaxScenarios bounds the points of one benchmark's matrix (six axes of ten values would be a
	// million scenarios, expanded in memory before the first one runs).
	MaxScenarios = 10_000
	// maxRunScenarios bounds the scenarios of all the definitions a run loads together: every
	// document of every file, with their matrices and include entries. Each benchmark within
	// MaxScenarios, hundreds of documents made millions of scenarios before the first ran.
	maxRunScenarios = 100_000
	// maxValueSize bounds a value after ${VAR} expansion, and MaxFileSize what the expansions
	// of one file add in all: a 6 KB definition whose values repeat a large variable made a
	// parameter of 200 MB.
	maxValueSize = 1 << 20
)

// size is an upper bound of the scenarios b expands to: its matrix points and its include
// entries, counted without expanding them.
func (b *Benchmark) size() int {
	n := 1
	for _, a := range b.Axes {
		if n *= len(a.Values); n > maxRunScenarios {
			return maxRunScenarios + 1
		}
	}
	if len(b.Axes) == 0 {
		n = 0
		if len(b.Include) == 0 {
			n = 1
		}
	}
	return n + len(b.Include)
}

// checkRunSize refuses benchmarks that expand to more than MaxRunScenarios scenarios together,
// naming the largest.
func checkRunSize(bs []*Benchmark) *Error {
	total := 0
	var largest *Benchmark
	for _, b := range bs {
		total += b.size()
		if largest == nil || b.size() > largest.size() {
			largest = b
		}
	}
	if total <= maxRunScenarios {
		return nil
	}
	return &Error{File: largest.File, Line: largest.Line, Col: 1,
		Msg:  fmt.Sprintf("the definitions make more than %d scenarios together (MaxRunScenarios); %s makes %d of them", maxRunScenarios, largest.Name, largest.size()),
		Hint: "select fewer files or benchmarks, or split the run"}
}

// Note: github.com/goccy/go-yaml v1.19.2 (the newest) parses a block mapping of k keys in O(k²)
// (parseMap recurses once per key and copies the rest) and panics decoding a tagged scalar into a
// list (`tags: !x 1`). No fixed version exists, so the file is checked with its lexer (linear)
// before it is parsed, tags outside YAML's core schema are refused, and decoding recovers.

// coreTags are the tags a definition may use: YAML's core schema for scalars.
var coreTags = map[string]bool{"!!str": true, "!!int": true, "!!float": true, "!!bool": true, "!!null": true}

// checkTokens checks data's size, nesting, keys per block mapping and tags before it is parsed.
func checkTokens(path string, data []byte) *Error {
	if len(data) > maxFileSize {
		return &Error{File: path, Msg: fmt.Sprintf("definition file is %d bytes, over the limit of %d (MaxFileSize)", len(data), maxFileSize)}
	}
	tokens := lexer.Tokenize(string(data))
	// Block structure by column: a stack of the columns of open mappings and lists with their key
	// counts. A key or list entry closes every block opened at a deeper column.
	type block struct{ col, keys int }
	var stack []block
	flow := 0
	errAt := func(tk *token.Token, msg string) *Error {
		return &Error{File: path, Line: tk.Position.Line, Col: tk.Position.Column, Msg: msg}
	}
	open := func(tk *token.Token, col int) *block {
		for len(stack) > 0 && stack[len(stack)-1].col > col {
			stack = stack[:len(stack)-1]
		}
		if len(stack) == 0 || stack[len(stack)-1].col < col {
			stack = append(stack, block{col: col})
		}
		return &stack[len(stack)-1]
	}
	for i, tk := range tokens {
		switch tk.Type {
		case token.DocumentHeaderType:
			stack, flow = stack[:0], 0
		case token.SequenceStartType, token.MappingStartType:
			flow++
		case token.SequenceEndType, token.MappingEndType:
			if flow > 0 {
				flow--
			}
		case token.SequenceEntryType:
			if flow == 0 {
				open(tk, tk.Position.Column)
			}
		case token.MappingValueType:
			if flow > 0 || i == 0 {
				break
			}
			key := tokens[i-1]
			b := open(key, key.Position.Column)
			b.keys++
			if b.keys > maxKeys {
				return errAt(key, fmt.Sprintf("a mapping with more than %d keys (MaxKeys): split it or use a list", maxKeys))
			}
		case token.TagType:
			if !coreTags[tk.Value] {
				return errAt(tk, fmt.Sprintf("YAML tag %s is not supported in definitions (only %s)", tk.Value, "!!str, !!int, !!float, !!bool, !!null"))
			}
		}
		if len(stack)+flow > maxDepth {
			return errAt(tk, fmt.Sprintf("values nested more than %d deep (MaxDepth)", maxDepth))
		}
	}
	return nil
}

// checkAliases reports a document whose aliases stand for more than MaxNodes values in all.
func checkAliases(path string, doc ast.Node) *Error {
	anchors := map[string]int{}
	aliased := 0               // values that aliases stand for
	var last, culprit ast.Node // the alias being expanded, and the one that went over
	over := func(int) bool {
		if aliased > maxNodes && culprit == nil {
			culprit = last
		}
		return aliased > maxNodes
	}
	var size func(n ast.Node, depth int) int
	// items is the size of a mapping or a sequence: itself and its k items (item(i)), stopping
	// once over.
	items := func(k int, item func(i int) ast.Node, depth int) int {
		total := 1
		for i := range k {
			total += size(item(i), depth+1)
			if over(total) {
				return total
			}
		}
		return total
	}
	size = func(n ast.Node, depth int) int {
		if n == nil || depth > 4*maxDepth {
			return 0
		}
		switch v := n.(type) {
		case *ast.MappingNode:
			return items(len(v.Values), func(i int) ast.Node { return v.Values[i] }, depth)
		case *ast.MappingValueNode:
			return size(v.Key, depth+1) + size(v.Value, depth+1)
		case *ast.SequenceNode:
			return items(len(v.Values), func(i int) ast.Node { return v.Values[i] }, depth)
		case *ast.AnchorNode:
			s := size(v.Value, depth+1)
			if v.Name != nil {
				anchors[v.Name.String()] = s
			}
			return s
		case *ast.AliasNode:
			last = v
			if v.Value != nil {
				n := anchors[v.Value.String()]
				aliased += n
				return n
			}
			return 1
		case *ast.TagNode:
			return size(v.Value, depth+1)
		case *ast.MappingKeyNode:
			return size(v.Value, depth+1)
		}
		return 1
	}
	if size(doc, 0); aliased > maxNodes {
		if culprit == nil {
			culprit = doc
		}
		return at(path, culprit, fmt.Sprintf("the aliases of this document stand for more than %d values (MaxNodes)", maxNodes), "")
	}
	return nil
}

// recovered turns a panic inside the YAML library into an error naming the file and the line of
// the document being decoded.
func recovered(path string, n ast.Node, errs *Errors) {
	if r := recover(); r != nil {
		e := at(path, n, fmt.Sprintf("the YAML library failed on this document (%v): simplify the values near here", r), "")
		*errs = append(*errs, e)
	}
}
