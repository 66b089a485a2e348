package main

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGuidesCommandLines parses every cellttl command line the README and
// the guides show in their code blocks, as the command would, so that a
// flag renamed or removed cannot leave a guide behind: each must name a
// command, and its flags and arguments must parse. (The worked examples
// are also run, by scripts/check-example.sh in CI.)
func TestGuidesCommandLines(t *testing.T) {
	files, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, "../../README.md", "../../beam/README.md", "../../pubsubsink/README.md")
	n := 0
	for _, file := range files {
		for _, l := range commandLines(t, file) {
			n++
			args := shellWords(l.text)
			name, rest := commandName(args[1:])
			if name == "help" || name == "-h" {
				continue
			}
			cmd := lookup(name)
			if cmd == nil {
				t.Errorf("%s:%d: no command %q: %s", file, l.line, name, l.text)
				continue
			}
			if _, err := parse(cmd, rest); err != nil {
				t.Errorf("%s:%d: %v: %s", file, l.line, err, l.text)
			}
		}
	}
	if n < 20 {
		t.Errorf("found %d command lines in the guides, want at least 20: is the search broken?", n)
	}
	t.Logf("%d command lines parsed", n)
}

// The search finds command lines, continued ones among them, and leaves
// out messages and synopses; a flag the command lacks fails to parse.
func TestGuidesCommandLinesFound(t *testing.T) {
	doc := filepath.Join(t.TempDir(), "guide.md")
	text := "Prose: cellttl check -nosuch\n\n```\n" +
		"$ cellttl check -project P -instance I -table T -family s=onesecond -nosuch\n" +
		"cellttl check: a message, not a command\n" +
		"cellttl sweep -project P -instance I -table T -family s=onesecond \\\n    -every 1m -since 2026-11-27T00:00:00Z | jq .\n" +
		"cellttl stats -project P -instance I -table T [-family SPEC]...\n" +
		"```\n"
	if err := os.WriteFile(doc, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	got := commandLines(t, doc)
	if len(got) != 2 || got[0].line != 4 || got[1].line != 6 {
		t.Fatalf("commandLines = %+v, want the lines 4 and 6", got)
	}
	if want := "cellttl sweep -project P -instance I -table T -family s=onesecond -every 1m -since 2026-11-27T00:00:00Z"; got[1].text != want {
		t.Errorf("continued line = %q, want %q", got[1].text, want)
	}
	name, rest := commandName(shellWords(got[0].text)[1:])
	if _, err := parse(lookup(name), rest); err == nil || !strings.Contains(err.Error(), "nosuch") {
		t.Errorf("parse(%q) = %v, want an error naming -nosuch", got[0].text, err)
	}
	if _, err := parse(lookup("sweep"), shellWords(got[1].text)[2:]); err != nil {
		t.Errorf("parse(%q) = %v", got[1].text, err)
	}
	if w := shellWords(`a 'b c' "d e"f`); len(w) != 3 || w[1] != "b c" || w[2] != "d ef" {
		t.Errorf("shellWords = %q", w)
	}
}

// A commandLine is a cellttl command line of a guide.
type commandLine struct {
	line int
	text string
}

// commandLines returns the cellttl command lines of file's code blocks:
// lines that start with "cellttl " or "$ cellttl ", continued by a
// trailing backslash, up to a pipe or a redirection. Not a command line:
// a message the command printed ("cellttl check: …"), and a synopsis
// ("[-apply]", "SPEC...").
func commandLines(t *testing.T, file string) []commandLine {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []commandLine
	sc := bufio.NewScanner(f)
	inBlock, n := false, 0
	var cur *commandLine
	for sc.Scan() {
		n++
		text := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(text), "```") {
			inBlock = !inBlock
			continue
		}
		if !inBlock {
			continue
		}
		if cur != nil {
			cur.text += " " + strings.TrimSpace(text)
		} else {
			s := strings.TrimPrefix(strings.TrimSpace(text), "$ ")
			words := strings.Fields(s)
			if len(words) < 2 || words[0] != "cellttl" || strings.HasSuffix(words[1], ":") ||
				len(words) > 2 && words[1] == "move" && strings.HasSuffix(words[2], ":") ||
				strings.Contains(s, "[") || strings.Contains(s, "...") || strings.Contains(s, "plan|") {
				continue
			}
			cur = &commandLine{line: n, text: s}
		}
		if strings.HasSuffix(cur.text, "\\") {
			cur.text = strings.TrimSpace(strings.TrimSuffix(cur.text, "\\"))
			continue
		}
		for _, end := range []string{" | ", " > ", " >> ", " 2>"} {
			if i := strings.Index(cur.text, end); i >= 0 {
				cur.text = cur.text[:i]
			}
		}
		cur.text = strings.TrimSpace(cur.text)
		out = append(out, *cur)
		cur = nil
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// shellWords splits s as a shell would split a simple command: on
// blanks, with single and double quotes grouping.
func shellWords(s string) []string {
	var out []string
	var w strings.Builder
	in, quote := false, byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
			w.WriteByte(c)
		case c == '\'' || c == '"':
			quote, in = c, true
		case c == ' ' || c == '\t':
			if in {
				out = append(out, w.String())
				w.Reset()
				in = false
			}
		default:
			w.WriteByte(c)
			in = true
		}
	}
	if in {
		out = append(out, w.String())
	}
	return out
}
