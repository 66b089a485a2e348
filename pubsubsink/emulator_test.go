//go:build unix

package pubsubsink_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"google.golang.org/api/iterator"

	"github.com/cellttl/ttl/pubsubsink"
	"github.com/cellttl/ttl/sweep"
)

// emulatorPath returns the gcloud SDK's Pub/Sub emulator, or "" when it
// is not installed: under the SDK that holds the gcloud on PATH, or the
// one CLOUDSDK_ROOT_DIR names.
func emulatorPath() string {
	var roots []string
	if dir := os.Getenv("CLOUDSDK_ROOT_DIR"); dir != "" {
		roots = append(roots, dir)
	}
	if gcloud, err := exec.LookPath("gcloud"); err == nil {
		if real, err := filepath.EvalSymlinks(gcloud); err == nil {
			roots = append(roots, filepath.Dir(filepath.Dir(real))) // <root>/bin/gcloud
		}
	}
	for _, root := range roots {
		path := filepath.Join(root, "platform", "pubsub-emulator", "bin", "cloud-pubsub-emulator")
		if _, err := os.Stat(path); err == nil {
			return path
		}
	}
	return ""
}

// startEmulator starts the gcloud Pub/Sub emulator on a free port for the
// test, points PUBSUB_EMULATOR_HOST at it, waits until it answers, and
// kills it at the end of the test. It skips the test under -short or
// when the emulator is not installed.
func startEmulator(t *testing.T) *pubsub.Client {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: not starting the gcloud Pub/Sub emulator (a JVM, seconds to start)")
	}
	path := emulatorPath()
	if path == "" {
		t.Skip("the gcloud Pub/Sub emulator is not installed (gcloud components install pubsub-emulator: " +
			"platform/pubsub-emulator/bin/cloud-pubsub-emulator under the SDK of the gcloud on PATH or of CLOUDSDK_ROOT_DIR)")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	host := "127.0.0.1:" + strconv.Itoa(port)

	cmd := exec.Command(path, "--host=127.0.0.1", "--port="+strconv.Itoa(port))
	log, err := os.Create(filepath.Join(t.TempDir(), "emulator.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	// Its own process group: the script execs a JVM, and a kill of the
	// group reaches whatever it started.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", path, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
		log.Close()
	})
	t.Setenv("PUBSUB_EMULATOR_HOST", host)
	client, err := pubsub.NewClient(ctx, project)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })

	deadline := time.Now().Add(90 * time.Second)
	for {
		attempt, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := client.TopicAdminClient.ListTopics(attempt, &pubsubpb.ListTopicsRequest{Project: "projects/" + project}).Next()
		cancel()
		if err == nil || errors.Is(err, iterator.Done) {
			return client
		}
		select {
		case err := <-exited:
			out, _ := os.ReadFile(log.Name())
			t.Fatalf("the emulator exited before answering: %v\n%s", err, out)
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			out, _ := os.ReadFile(log.Name())
			t.Fatalf("the emulator at %s did not answer within 90s: %v\n%s", host, err, out)
		}
	}
}

// TestGcloudEmulator publishes to the gcloud Pub/Sub emulator, ordered by
// row, and pulls the messages back from an ordered subscription: each
// decodes to its event with its attributes, each row's in order. A
// missing topic fails with ErrNoTopic there too.
func TestGcloudEmulator(t *testing.T) {
	client := startEmulator(t)
	publisher := createTopic(t, client, "expired", true)
	sub := "projects/" + project + "/subscriptions/expired-sub"
	if _, err := client.SubscriptionAdminClient.CreateSubscription(ctx, &pubsubpb.Subscription{
		Name: sub, Topic: topicName("expired"), EnableMessageOrdering: true, AckDeadlineSeconds: 60,
	}); err != nil {
		t.Fatal(err)
	}
	deliver, err := pubsubsink.New(publisher, pubsubsink.Options{OrderingKey: pubsubsink.ByRow})
	if err != nil {
		t.Fatal(err)
	}
	batch := events(30)
	for i := range batch {
		batch[i].Row = fmt.Sprintf("row%d", i%3) // ten events in each of three rows
	}
	if err := deliver(ctx, batch); err != nil {
		t.Fatalf("deliver: %v", err)
	}

	want := map[string]sweep.Event{} // by ID
	order := map[string][]string{}   // each row's IDs, as published
	for _, e := range batch {
		want[e.ID()] = e
		order[e.Row] = append(order[e.Row], e.ID())
	}
	got := map[string][]string{}
	deadline := time.Now().Add(30 * time.Second)
	for n := 0; n < len(batch); {
		if time.Now().After(deadline) {
			t.Fatalf("pulled %d messages in 30s, want %d", n, len(batch))
		}
		res, err := client.SubscriptionAdminClient.Pull(ctx, &pubsubpb.PullRequest{Subscription: sub, MaxMessages: 100})
		if err != nil {
			t.Fatal(err)
		}
		var acks []string
		for _, rm := range res.ReceivedMessages {
			m := rm.Message
			e, ok := want[m.Attributes["id"]]
			if !ok {
				t.Fatalf("message with attributes %v: no such event", m.Attributes)
			}
			checkMessage(t, m.Data, m.Attributes, e)
			if m.OrderingKey != e.Row {
				t.Errorf("%v: ordering key %q, want its row", e, m.OrderingKey)
			}
			got[e.Row] = append(got[e.Row], e.ID())
			acks = append(acks, rm.AckId)
			n++
		}
		if len(acks) > 0 {
			if err := client.SubscriptionAdminClient.Acknowledge(ctx, &pubsubpb.AcknowledgeRequest{Subscription: sub, AckIds: acks}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(order) {
		t.Errorf("each row's messages pulled in order %v, want %v", got, order)
	}

	missing := client.Publisher("missing")
	t.Cleanup(missing.Stop)
	deliver, err = pubsubsink.New(missing, pubsubsink.Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkNoTopic(t, deliver(ctx, events(1)), "missing", "1 of 1 events not published")
}
