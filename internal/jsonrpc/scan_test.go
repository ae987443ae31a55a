package jsonrpc

import (
	"encoding/json"
	"reflect"
	"testing"
)

// FuzzEnvelopeScan: for every valid JSON body the one-pass envelope
// scanner decodes what json.Unmarshal decodes, and fails where it fails.
func FuzzEnvelopeScan(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"echo","params":{"a":[1,"}"]}}`,
		`{"jsonrpc":"2.0","method":"n\u0061me","params":null}`,
		`{"jsonrpc":"2.0","id":"x","result":{"k":"\"}"},"error":null}`,
		`{"jsonrpc":"2.0","id":2,"error":{"code":-1,"message":"m","data":[1]}}`,
		`{"Method":"x","ID":3}`, `{"jsonrpc":2}`, `{"method":7}`, `{}`, `[]`, `null`, `"s"`, ` { "id" : 1 , "method" : "m" } `,
		`{"id":1,"id":2,"method":"a","method":"b"}`, `{"x":{"method":"no"},"method":"yes"}`, `{"error":{"code":1},"error":{"message":"m"}}`,
		// encoding/json folds some non-ASCII letters into ASCII keys.
		`{"jsonrpc":"2.0","id":1,"reſult":1}`, `{"jſonrpc":"2.0","method":"m"}`, `{"id":1,"Key":1,"method":"m"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if !json.Valid(body) {
			return
		}
		var want, got envelope
		wantErr := json.Unmarshal(body, &want)
		gotErr := unmarshalEnvelope(body, &got)
		if (wantErr != nil) != (gotErr != nil) {
			t.Fatalf("%s: json.Unmarshal error %v, scanner error %v", body, wantErr, gotErr)
		}
		if wantErr == nil && !reflect.DeepEqual(want, got) {
			t.Fatalf("%s:\njson.Unmarshal %+v\nscanner        %+v", body, want, got)
		}
	})
}
