package serve

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
)

// ErrLogFormat reports a -log-format other than text or json.
var ErrLogFormat = errors.New("unknown log format")

// LogWriter turns the lines a command writes to stderr into log records:
// one record a line, of level WARN when the line names the command
// ("cellttl NAME: …", its errors and warnings: NAME, "sweep" or "move
// rewrite", becomes the attribute command) and INFO otherwise (reports, progress). Its methods
// may be called from any goroutine; a line split over writes is logged
// once whole.
type LogWriter struct {
	mu  sync.Mutex
	log *slog.Logger
	buf bytes.Buffer
}

// NewLog returns where a command writes what it prints to stderr: w
// itself for format text (or ""), a LogWriter of JSON records (log/slog's
// JSON handler) on w for json, ErrLogFormat otherwise.
func NewLog(w io.Writer, format string) (io.Writer, error) {
	switch format {
	case "", "text":
		return w, nil
	case "json":
		return &LogWriter{log: slog.New(slog.NewJSONHandler(w, nil))}, nil
	}
	return nil, fmt.Errorf("-log-format %q: %w: want text or json", format, ErrLogFormat)
}

// Write logs each whole line of p; the rest waits for its end.
func (l *LogWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	for {
		line, err := l.buf.ReadString('\n')
		if err != nil {
			l.buf.WriteString(line) // no newline yet: keep it
			return len(p), nil
		}
		l.line(slog.LevelInfo, strings.TrimSuffix(line, "\n"))
	}
}

// Error logs msg, a line naming the command or not, at level ERROR.
func (l *LogWriter) Error(msg string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.line(slog.LevelError, msg)
}

// Flush logs a last line that did not end.
func (l *LogWriter) Flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.buf.Len() > 0 {
		l.line(slog.LevelInfo, l.buf.String())
		l.buf.Reset()
	}
}

// line logs one line at level, or WARN at least when it names the command.
func (l *LogWriter) line(level slog.Level, line string) {
	line = strings.TrimRight(line, "\r")
	if strings.TrimSpace(line) == "" {
		return
	}
	var attrs []slog.Attr
	if rest, ok := strings.CutPrefix(line, "cellttl "); ok {
		if name, msg, ok := strings.Cut(rest, ": "); ok && name != "" {
			line, attrs = msg, []slog.Attr{slog.String("command", name)}
			level = max(level, slog.LevelWarn)
		}
	}
	l.log.LogAttrs(context.Background(), level, line, attrs...)
}
