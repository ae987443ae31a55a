package calc

import (
	"reflect"
	"testing"
)

func TestMax(t *testing.T) {
	if Max(3, 7) != 7 || Max(7, 3) != 7 || Max(-1, -2) != -1 {
		t.Errorf("Max(3, 7), Max(7, 3), Max(-1, -2) = %d, %d, %d; want 7, 7, -1", Max(3, 7), Max(7, 3), Max(-1, -2))
	}
}

func TestSum(t *testing.T) {
	if got := Sum([]int{1, 2, 3, 4}); got != 10 {
		t.Errorf("Sum([1 2 3 4]) = %d, want 10", got)
	}
}

func TestSub(t *testing.T) {
	if got := Sub(10, 4); got != 6 {
		t.Errorf("Sub(10, 4) = %d, want 6", got)
	}
}

func TestBetween(t *testing.T) {
	for _, c := range []struct {
		x    int
		want bool
	}{{0, true}, {5, true}, {10, true}, {-1, false}, {11, false}} {
		if got := Between(c.x, 0, 10); got != c.want {
			t.Errorf("Between(%d, 0, 10) = %v, want %v", c.x, got, c.want)
		}
	}
}

func TestCountIf(t *testing.T) {
	if got := CountIf([]string{"a", "b", "a", "c"}, "a"); got != 2 {
		t.Errorf("CountIf([a b a c], a) = %d, want 2", got)
	}
}

func TestRepeat(t *testing.T) {
	if got := Repeat("ab", "-", 3); got != "ab-ab-ab" {
		t.Errorf("Repeat(ab, -, 3) = %q, want ab-ab-ab", got)
	}
	if got := Repeat("x", ",", 0); got != "" {
		t.Errorf("Repeat(x, \",\", 0) = %q, want empty", got)
	}
}

func TestWindow(t *testing.T) {
	xs := []int{0, 1, 2, 3, 4}
	for _, c := range []struct {
		from, to int
		want     []int
	}{{1, 3, []int{1, 2}}, {-2, 2, []int{0, 1}}, {3, 9, []int{3, 4}}, {4, 4, nil}, {0, 5, []int{0, 1, 2, 3, 4}}} {
		if got := Window(xs, c.from, c.to); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Window(xs, %d, %d) = %v, want %v", c.from, c.to, got, c.want)
		}
	}
}

func TestPow(t *testing.T) {
	if got := Pow(2, 10); got != 1024 {
		t.Errorf("Pow(2, 10) = %d, want 1024", got)
	}
	if got := Pow(5, 0); got != 1 {
		t.Errorf("Pow(5, 0) = %d, want 1", got)
	}
}
