package explain

import (
	"bytes"
	_ "embed"
	"html/template"
)

//go:embed explain.tmpl
var htmlText string

// htmlTmpl is the explanations' section of an HTML report, drawn below its benchmarks or verdicts.
var htmlTmpl = template.Must(template.New("").Funcs(template.FuncMap{
	"cost":       FormatCost,
	"share":      pct,
	"q":          qText,
	"compared":   compared,
	"flame":      flameSVG,
	"codeQuotes": codeQuotes,
}).Parse(htmlText))

// HTML renders explanations as the section of an HTML report (report.HTMLOptions.Explain): each
// scenario's headline, its named entries and its differential flame graph; "" for none.
func HTML(xs []Scenario) (template.HTML, error) {
	if len(xs) == 0 {
		return "", nil
	}
	var b bytes.Buffer
	if err := htmlTmpl.ExecuteTemplate(&b, "explain", xs); err != nil {
		return "", err
	}
	return template.HTML(b.String()), nil
}
