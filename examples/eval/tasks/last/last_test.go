package last

import (
	"reflect"
	"testing"
)

func TestLast(t *testing.T) {
	got := Last([]string{"a", "b", "c"}, 2)
	if want := []string{"b", "c"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Last([a b c], 2) = %v, want %v", got, want)
	}
}
