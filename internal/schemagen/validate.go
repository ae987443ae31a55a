package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/lsp/api"
)

// maxRecord bounds one recorded line.
const maxRecord = 4 << 20

// validateTraffic checks each record of path, an executeCommand
// {command, arguments, result?} against the commands schema or the
// `ioh` settings an editor sent, {settings}, against the settings schema,
// and returns how many it checked. An empty file is an error: the
// recording is not working.
func validateTraffic(path string) (int, error) {
	sch, err := compiled(api.CommandsSchema)
	if err != nil {
		return 0, fmt.Errorf("compile the commands schema: %w", err)
	}
	settings, err := compiled(api.SettingsSchema)
	if err != nil {
		return 0, fmt.Errorf("compile the settings schema: %w", err)
	}
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), maxRecord)
	var problems []string
	n, line := 0, 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		n++
		if err := checkRecord(sch, settings, []byte(text)); err != nil {
			problems = append(problems, fmt.Sprintf("%s:%d: %v", path, line, err))
		}
	}
	if err := sc.Err(); err != nil {
		return n, fmt.Errorf("read %s: %w", path, err)
	}
	if len(problems) > 0 {
		return n, errors.New(strings.Join(problems, "\n"))
	}
	if n == 0 {
		return 0, fmt.Errorf("%s records no command", path)
	}
	return n, nil
}

func compiled(gen func() ([]byte, error)) (*contract.Schema, error) {
	doc, err := gen()
	if err != nil {
		return nil, err
	}
	return contract.CompileSchema(doc)
}

// checkRecord validates one {command, arguments, result?} or {settings}
// record.
func checkRecord(sch, settings *contract.Schema, rec []byte) error {
	var r struct {
		Command  string          `json:"command"`
		Result   json.RawMessage `json:"result"`
		Settings json.RawMessage `json:"settings"`
	}
	if err := json.Unmarshal(rec, &r); err != nil {
		return fmt.Errorf("not a record: %w", err)
	}
	if r.Settings != nil {
		if err := settings.Validate(r.Settings); err != nil {
			return fmt.Errorf("settings %s: %w", r.Settings, err)
		}
		return nil
	}
	var params map[string]json.RawMessage
	if err := json.Unmarshal(rec, &params); err != nil {
		return err
	}
	delete(params, "result")
	raw, err := json.Marshal(params)
	if err != nil {
		return err
	}
	if err := sch.Validate(raw); err != nil {
		return fmt.Errorf("%s sent %s: %w", r.Command, raw, err)
	}
	if len(r.Result) == 0 {
		return nil
	}
	res, err := sch.Def(r.Command + ".result")
	if err != nil {
		return err
	}
	if err := res.Validate(r.Result); err != nil {
		return fmt.Errorf("%s answered %s: %w", r.Command, r.Result, err)
	}
	return nil
}
