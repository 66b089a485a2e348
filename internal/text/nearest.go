package text

// Nearest returns the candidate closest to name by edit distance
// (Levenshtein: insertions, deletions and substitutions of one character
// each), if one is within max edits and differs from name; the first such
// candidate in order wins a tie. It returns "" when none is: a suggestion
// for a misspelled name, "did you mean …?".
func Nearest(name string, candidates []string, max int) string {
	best, bestDist := "", max+1
	for _, c := range candidates {
		if c == name {
			continue
		}
		if d := Distance(name, c); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// Distance returns the Levenshtein distance between a and b, counted in
// characters (runes).
func Distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
