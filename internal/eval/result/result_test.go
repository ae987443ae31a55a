package result

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadTornAndBadLines(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, FileName)
	os.WriteFile(p, []byte(`{"task":"a","variant":"v","repeat":1,"verified":true}`+"\n"+`{"task":"b","vari`), 0o644)
	cells, torn, err := Read(p)
	if err != nil || len(cells) != 1 || torn != 54 {
		t.Fatalf("cells %v torn %d err %v", cells, torn, err)
	}
	w, err := Append(p, torn)
	if err != nil {
		t.Fatal(err)
	}
	w.Add(Cell{Task: "b", Variant: "v", Repeat: 1})
	w.Close()
	if cells, torn, err = Read(p); err != nil || len(cells) != 2 || torn != -1 || cells[1].Task != "b" {
		t.Fatalf("after append: %v %d %v", cells, torn, err)
	}
	os.WriteFile(p, []byte(`{"task":"a","variant":"v"}`+"\n"+"not json\n"), 0o644)
	if _, _, err := Read(p); err == nil || !strings.HasPrefix(err.Error(), p+":2: not a result line") {
		t.Fatalf("bad line: %v", err)
	}
	os.WriteFile(p, []byte(`{"repeat":1}`+"\n"), 0o644)
	if _, _, err := Read(p); err == nil || !strings.Contains(err.Error(), ":1: a result line needs task and variant") {
		t.Fatalf("keyless line: %v", err)
	}
}

func TestMerge(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, cells ...Cell) string {
		p := filepath.Join(dir, name)
		f, _ := os.Create(p)
		WriteAll(f, cells)
		f.Close()
		return p
	}
	a := write("a", Cell{Task: "t2", Variant: "v", Repeat: 1}, Cell{Task: "t1", Variant: "v", Repeat: 2})
	b := write("b", Cell{Task: "t1", Variant: "v", Repeat: 1}, Cell{Task: "t1", Variant: "v", Repeat: 2})
	cells, err := Merge(a, b)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, c := range cells {
		keys = append(keys, c.Key().String())
	}
	if strings.Join(keys, " ") != "t1/v/1 t1/v/2 t2/v/1" {
		t.Fatalf("merged %v", keys)
	}
	c := write("c", Cell{Task: "t2", Variant: "v", Repeat: 1, Verified: true, Outcome: "verified"})
	if _, err := Merge(a, c); err == nil || !strings.Contains(err.Error(), "cell t2/v/1 is in "+a) {
		t.Fatalf("conflict: %v", err)
	}
}
