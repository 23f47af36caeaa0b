package serveimport

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/inferbench/inferbench/internal/base/finite"
)

// sniffBytes is how much of a file Detect reads: the first keys of a tool's document are there.
const sniffBytes = 1 << 20

// lookedFor says what Detect looks for, for the error of a file it does not recognise.
const lookedFor = "want vLLM `bench serve --save-result` JSON (keys backend, model_id, completed), AIPerf's profile_export_aiperf.json " +
	"(aiperf_version) or profile_export.jsonl (a record a line: metadata, metrics), guidellm's benchmarks.json (metadata.guidellm_version, " +
	"benchmarks) or an llm-d benchmark report v0.2 (version, scenario, results; YAML or JSON)"

// Detect says which serving tool wrote the file at path, from its content: VLLM, AIPerf,
// GuideLLM or LLMD, "" when it is none of them (another format's file: go test -bench output,
// pytest-benchmark JSON, an inferbench run). jsonl is true for AIPerf's per-request records.
func Detect(path string) (tool string, jsonl bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	head, err := io.ReadAll(io.LimitReader(f, sniffBytes))
	if err != nil {
		return "", false, err
	}
	t := bytes.TrimLeft(head, " \t\r\n\ufeff")
	if len(t) == 0 {
		return "", false, nil
	}
	if t[0] == '[' { // vllm bench sweep's summary.json: bench serve's documents
		if keys := jsonKeys(bytes.TrimLeft(t[1:], " \t\r\n")); keys["completed"] && (keys["backend"] || keys["endpoint_type"]) {
			return VLLM, false, nil
		}
		return "", false, nil
	}
	if t[0] != '{' {
		if yamlKeys(t)["results"] && yamlKeys(t)["version"] && (yamlKeys(t)["scenario"] || yamlKeys(t)["run"]) {
			return LLMD, false, nil
		}
		return "", false, nil
	}
	keys := jsonKeys(t)
	if line, _, ok := bytes.Cut(t, []byte("\n")); ok && keys["metadata"] && keys["metrics"] && json.Valid(line) {
		return AIPerf, true, nil
	}
	switch {
	case keys["aiperf_version"] || (keys["schema_version"] && keys["benchmark_id"]):
		return AIPerf, false, nil
	case keys["benchmarks"] && (keys["metadata"] || keys["config"] || keys["args"]) && !keys["machine_info"] && !keys["commit_info"]:
		return GuideLLM, false, nil
	case (keys["endpoint_type"] || keys["backend"]) && (keys["model_id"] || keys["completed"] || keys["request_throughput"]):
		return VLLM, false, nil
	case keys["version"] && keys["results"] && (keys["scenario"] || keys["run"]):
		return LLMD, false, nil
	}
	return "", false, nil
}

// Unknown is the error of a file no reader recognises, naming what was looked for.
func Unknown(name string) error { return fmt.Errorf("%s: %w (%s)", name, ErrUnknown, lookedFor) }

// jsonKeys returns the keys of the first JSON object in b, as far as b holds it.
func jsonKeys(b []byte) map[string]bool {
	keys := map[string]bool{}
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return keys
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return keys
		}
		k, _ := t.(string)
		keys[k] = true
		if err := skipValue(dec); err != nil {
			return keys
		}
	}
	return keys
}

// yamlKeys returns the top-level keys of the YAML document b holds the start of: lines that
// start with a name and a colon.
func yamlKeys(b []byte) map[string]bool {
	keys := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == ' ' || line[0] == '#' || line[0] == '-' {
			continue
		}
		if k, _, ok := strings.Cut(line, ":"); ok && !strings.ContainsAny(k, " \t\"'{[") {
			keys[k] = true
		}
	}
	return keys
}

// skipValue reads the next value of dec (finite.SkipValue); a cut document is eof's error.
func skipValue(dec *json.Decoder) error {
	if err := finite.SkipValue(dec); err != nil {
		return eof(err)
	}
	return nil
}

// eof is err, io.ErrUnexpectedEOF for the end of a document cut short.
func eof(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("the file ends early (truncated?): %w", io.ErrUnexpectedEOF)
	}
	return err
}

// expect reads the next token of dec and fails unless it is d.
func expect(dec *json.Decoder, d json.Delim) error {
	t, err := dec.Token()
	if err != nil {
		return eof(err)
	}
	if t != d {
		return fmt.Errorf("want %v, found %v", d, t)
	}
	return nil
}
