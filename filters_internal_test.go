package ttl

import (
	"math/rand"
	"regexp"
	"testing"
)

// TestNoneOf checks that noneOf's pattern, fully matched as Bigtable
// matches family names, accepts every name but the given ones.
func TestNoneOf(t *testing.T) {
	sets := [][]string{
		{"f"},
		{"clicks"},
		{"a", "ab", "abc"},
		{"sess", "session", "s"},
		{"a-b", "a.b", "a_b", "A9"},
	}
	alphabet := []byte("abcsAZ9-._x")
	rng := rand.New(rand.NewSource(1))
	for _, set := range sets {
		re := regexp.MustCompile("^(?:" + noneOf(set) + ")$")
		in := map[string]bool{}
		probes := []string{"", "x"}
		for _, n := range set {
			in[n] = true
			probes = append(probes, n, n+"x", n[:len(n)-1], "x"+n, n+"\n")
		}
		for i := 0; i < 2000; i++ {
			b := make([]byte, rng.Intn(8))
			for j := range b {
				b[j] = alphabet[rng.Intn(len(alphabet))]
			}
			probes = append(probes, string(b))
		}
		for _, p := range probes {
			if got := re.MatchString(p); got == in[p] {
				t.Errorf("noneOf(%q) = %s: matches %q = %v want %v", set, noneOf(set), p, got, !in[p])
			}
		}
	}
}
