// Package report renders results for people and tools: the summary table printed after a run,
// and (in later files) markdown, JUnit and HTML. Renderers write to the io.Writer they are given.
package report
