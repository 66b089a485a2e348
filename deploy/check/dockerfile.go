package check

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// ErrDockerfile reports a Dockerfile the check cannot follow, or one whose
// image would not run the binary its builder builds.
var ErrDockerfile = errors.New("Dockerfile")

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct {
	Line int
	Cmd  string // upper case: FROM, RUN, COPY, ...
	Args string
}

// stage is one FROM and the instructions after it.
type stage struct {
	Image, Name string
	Steps       []instruction
}

// Image is what the check reads of a multi-stage Dockerfile.
type Image struct {
	Path       string
	Builder    string            // the builder's base image
	BuildLine  string            // the builder's RUN command line that runs go build
	Env        map[string]string // the builder's ENV
	Output     string            // the path go build -o writes
	Final      string            // the final stage's base image
	Entrypoint string            // the final stage's ENTRYPOINT (exec form)
}

var (
	goOutput   = regexp.MustCompile(`\bgo build\b[^&;|]*\s-o\s+(\S+)`)
	runOptions = regexp.MustCompile(`^(--\S+\s+)+`)
	goTag      = regexp.MustCompile(`^golang:(\d+)\.(\d+)(?:\.(\d+))?`)
	goDirect   = regexp.MustCompile(`(?m)^go (\d+)\.(\d+)(?:\.(\d+))?\s*$`)
)

// ParseDockerfile reads a multi-stage Dockerfile and checks that its
// builder stage copies the whole context and runs go build -o PATH, and
// that its final stage copies PATH from the builder and runs it as its
// ENTRYPOINT, in exec form.
func ParseDockerfile(path string) (*Image, error) {
	stages, err := readStages(path)
	if err != nil {
		return nil, err
	}
	img := &Image{Path: path, Env: map[string]string{}}
	fail := func(line int, format string, a ...any) (*Image, error) {
		return nil, fmt.Errorf("%w: %s:%d: %s", ErrDockerfile, path, line, fmt.Sprintf(format, a...))
	}
	var build *stage
	for i := range stages {
		for _, in := range stages[i].Steps {
			if in.Cmd == "RUN" && goOutput.MatchString(in.Args) {
				build, img.Builder = &stages[i], stages[i].Image
				img.BuildLine = runOptions.ReplaceAllString(in.Args, "")
				img.Output = goOutput.FindStringSubmatch(in.Args)[1]
			}
		}
	}
	if build == nil {
		return fail(1, "no RUN line runs go build -o PATH")
	}
	copied := false
	for _, in := range build.Steps {
		switch in.Cmd {
		case "COPY":
			copied = copied || strings.HasPrefix(in.Args, ". ")
		case "ENV":
			for _, kv := range strings.Fields(in.Args) {
				k, v, _ := strings.Cut(kv, "=")
				img.Env[k] = v
			}
		}
	}
	if !copied {
		return fail(1, "the builder stage %q does not COPY . (the whole context): its build line would not run as in the repository", build.Name)
	}
	final := stages[len(stages)-1]
	if &stages[len(stages)-1] == build {
		return fail(1, "the build runs in the last stage: the image would hold the toolchain")
	}
	img.Final = final.Image
	dest := ""
	for _, in := range final.Steps {
		switch in.Cmd {
		case "COPY":
			f := strings.Fields(in.Args)
			if len(f) == 3 && f[0] == "--from="+build.Name && f[1] == img.Output {
				dest = f[2]
			}
		case "ENTRYPOINT":
			var ep []string
			if err := jsonArray(in.Args, &ep); err != nil || len(ep) == 0 {
				return fail(in.Line, "ENTRYPOINT %s: want the exec form, [\"/binary\"]", in.Args)
			}
			img.Entrypoint = ep[0]
		}
	}
	switch {
	case dest == "":
		return fail(1, "the last stage does not COPY --from=%s %s (the binary go build writes)", build.Name, img.Output)
	case img.Entrypoint != dest:
		return fail(1, "ENTRYPOINT %q is not the binary copied to %s", img.Entrypoint, dest)
	}
	return img, nil
}

// readStages splits a Dockerfile into its stages.
func readStages(path string) ([]stage, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var stages []stage
	var cur strings.Builder
	start := 0
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if cur.Len() == 0 && (line == "" || strings.HasPrefix(line, "#")) {
			continue
		}
		if cur.Len() == 0 {
			start = n
		}
		if more, ok := strings.CutSuffix(line, `\`); ok {
			cur.WriteString(more + " ")
			continue
		}
		cur.WriteString(line)
		cmd, args, _ := strings.Cut(cur.String(), " ")
		in := instruction{Line: start, Cmd: strings.ToUpper(cmd), Args: strings.Join(strings.Fields(args), " ")}
		cur.Reset()
		if in.Cmd == "FROM" {
			f := strings.Fields(in.Args)
			s := stage{Image: f[0], Name: strconv.Itoa(len(stages))}
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				s.Name = f[2]
			}
			stages = append(stages, s)
			continue
		}
		if len(stages) == 0 {
			return nil, fmt.Errorf("%w: %s:%d: %s before FROM", ErrDockerfile, path, in.Line, in.Cmd)
		}
		stages[len(stages)-1].Steps = append(stages[len(stages)-1].Steps, in)
	}
	if len(stages) < 2 {
		return nil, fmt.Errorf("%w: %s: want two stages, a builder and the image", ErrDockerfile, path)
	}
	return stages, sc.Err()
}

// CheckGo checks that the builder's Go (its golang:X.Y.Z tag) is at least
// the go directive of the go.mod that governs dir, the directory the
// build line builds in.
func (img *Image) CheckGo(dir string) error {
	m := goTag.FindStringSubmatch(img.Builder)
	if m == nil {
		return fmt.Errorf("%w: %s: builder image %q: want golang:X.Y.Z", ErrDockerfile, img.Path, img.Builder)
	}
	for d := dir; ; d = filepath.Dir(d) {
		b, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err != nil {
			if d == filepath.Dir(d) {
				return fmt.Errorf("%w: no go.mod governs %s", ErrDockerfile, dir)
			}
			continue
		}
		want := goDirect.FindSubmatch(b)
		if want == nil {
			return fmt.Errorf("%w: %s/go.mod has no go directive", ErrDockerfile, d)
		}
		for i := 1; i <= 3; i++ {
			have, _ := strconv.Atoi(m[i])
			need, _ := strconv.Atoi(string(want[i]))
			if have != need {
				if have < need {
					return fmt.Errorf("%w: %s: builder %s is older than go %s.%s.%s, which %s/go.mod requires",
						ErrDockerfile, img.Path, img.Builder, want[1], want[2], want[3], d)
				}
				return nil
			}
		}
		return nil
	}
}

// BuildDir returns the directory, under root, the build line changes to
// before go build ("cd DIR && ..."), or root.
func (img *Image) BuildDir(root string) string {
	if dir, ok := strings.CutPrefix(img.BuildLine, "cd "); ok {
		dir, _, _ = strings.Cut(dir, " ")
		return filepath.Join(root, dir)
	}
	return root
}

// Build runs the builder's go build line with sh in root (the build
// context), with the builder's ENV, writing to out instead of the -o
// path's directory, and returns the binary's path. It fails if the line
// fails or writes no executable file where the image copies it from.
func (img *Image) Build(ctx context.Context, root, out string) (string, error) {
	line := strings.ReplaceAll(img.BuildLine, filepath.Dir(img.Output)+"/", out+"/")
	cmd := exec.CommandContext(ctx, "sh", "-c", line)
	cmd.Dir = root
	cmd.Env = os.Environ()
	for k, v := range img.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%w: %s: build line %q: %w\n%s", ErrDockerfile, img.Path, line, err, b)
	}
	bin := filepath.Join(out, filepath.Base(img.Output))
	st, err := os.Stat(bin)
	if err != nil || st.Mode()&0o111 == 0 {
		return "", fmt.Errorf("%w: %s: build line %q wrote no executable %s", ErrDockerfile, img.Path, line, bin)
	}
	return bin, nil
}
