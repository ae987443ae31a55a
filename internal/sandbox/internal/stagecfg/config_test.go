package stagecfg

import (
	"bytes"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

// fillEvery sets every field of the struct v points to (recursing into
// structs) to a value other than its zero, distinct per field: a field
// added to Config that the stage frame forgets comes back zero and
// fails the round trip.
func fillEvery(t *testing.T, v reflect.Value, seed *int) {
	t.Helper()
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		*seed++
		n := *seed
		switch f.Kind() {
		case reflect.String:
			f.SetString(strings.Repeat("é\"\\\x00/", n%3+1) + string(rune('a'+n%26)))
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Int, reflect.Int64:
			f.SetInt(-int64(n) * 1_000_000_007)
		case reflect.Slice:
			if f.Type().Elem().Kind() != reflect.String {
				t.Fatalf("field %s: no filler for %s", v.Type().Field(i).Name, f.Type())
			}
			f.Set(reflect.ValueOf([]string{"/x", "", strings.Repeat("y", 300+n)}))
		case reflect.Map:
			f.Set(reflect.ValueOf(map[string]string{"/a": "/b", "/c": "", "": "/d"}))
		case reflect.Struct:
			fillEvery(t, f, seed)
		default:
			t.Fatalf("field %s: no filler for %s", v.Type().Field(i).Name, f.Type())
		}
	}
}

// frameBody is cfg's frame without its header.
func frameBody(t *testing.T, cfg *Config) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, cfg); err != nil {
		t.Fatal(err)
	}
	n, err := BodyLen(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if n != buf.Len()-HeaderLen {
		t.Fatalf("frame says %d bytes, body has %d", n, buf.Len()-HeaderLen)
	}
	return buf.Bytes()[HeaderLen:]
}

// TestRoundTrip: the stage frame carries every field of the
// config, nil lists and maps as nil and empty ones as empty (as JSON
// did), and the extreme integers.
func TestRoundTrip(t *testing.T) {
	var full Config
	seed := 0
	fillEvery(t, reflect.ValueOf(&full).Elem(), &seed)
	full.Limits.Wall = math.MaxInt64
	full.Limits.Memory = math.MinInt64
	empty := Config{Argv: []string{}, Env: []string{}, ViewLinks: map[string]string{}}
	for name, cfg := range map[string]Config{"every field set": full, "zero": {}, "empty lists": empty} {
		got, err := Decode(frameBody(t, &cfg))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(got, cfg) {
			t.Fatalf("%s: decoded\n%+v\nwant\n%+v", name, got, cfg)
		}
	}
}

// TestBadFrames: a cut, padded or corrupted frame is an
// error, never a panic or a huge allocation.
func TestBadFrames(t *testing.T) {
	cfg := Config{Argv: []string{"/bin/true"}, Dir: "/w", ReadView: []string{"/usr", "/etc/passwd"}, ReadViewTypes: "df",
		ViewLinks: map[string]string{"/lib": "usr/lib"}, Limits: Limits{Wall: time.Minute}}
	body := frameBody(t, &cfg)
	for i := 0; i < len(body); i++ {
		if _, err := Decode(body[:i]); err == nil {
			t.Fatalf("a body cut to %d of %d bytes decoded", i, len(body))
		}
	}
	if _, err := Decode(append(append([]byte{}, body...), 0)); err == nil || !strings.Contains(err.Error(), "after the last field") {
		t.Fatalf("a padded body: %v", err)
	}
	// Every byte changed to every value: decodes or fails, never panics.
	for i := range body {
		for _, v := range []byte{0, 1, 2, 0x7f, 0x80, 0xff} {
			b := append([]byte{}, body...)
			b[i] = v
			_, _ = Decode(b)
		}
	}
	// A count far past the body is refused before anything is made.
	huge := []byte{0xff, 0xff, 0xff, 0xff, 0x0f}
	if _, err := Decode(huge); err == nil || !strings.Contains(err.Error(), "elements in") {
		t.Fatalf("a huge count: %v", err)
	}
	for _, h := range [][]byte{nil, []byte("ioh"), []byte("{\"argv\":[]}\n"), []byte("ioh\x02\x00\x00\x00\x00"), []byte("ioh\x01\xff\xff\xff\xff")} {
		if _, err := BodyLen(h); err == nil {
			t.Fatalf("header %q taken", h)
		}
	}
}
