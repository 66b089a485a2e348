package check

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// WorkloadIdentity is the annotation that maps a Kubernetes service
// account to a Google service account on GKE.
const WorkloadIdentity = "iam.gke.io/gcp-service-account"

// Replicas is the number of replicas a sweeper's Deployment runs: one
// delivers, one stands by.
const Replicas = 2

// CheckSweepers checks every Deployment in m as a deployment of
// "cellttl sweep" with a lease: Replicas replicas; arguments that fl, the
// flags of "cellttl sweep -h", takes, with a Bigtable -checkpoint, a
// -lease, -metrics-addr, -log-format=json and -every; liveness on /healthz
// and readiness on /readyz at the port of -metrics-addr, which the
// container and a PodMonitor selecting its pods name; resources; a
// non-root, read-only container; a service account in m with a Workload
// Identity annotation; and a PodDisruptionBudget selecting its pods.
func (m *Manifests) CheckSweepers(fl Flags) error {
	if len(m.Deployments) == 0 {
		return fmt.Errorf("%w: no Deployment", ErrManifest)
	}
	var errs []error
	for _, d := range m.Deployments {
		for _, err := range m.checkSweeper(d, fl) {
			errs = append(errs, fmt.Errorf("%w: Deployment %s/%s: %w", ErrManifest, d.Namespace, d.Name, err))
		}
	}
	return errors.Join(errs...)
}

func (m *Manifests) checkSweeper(d *appsv1.Deployment, fl Flags) (errs []error) {
	fail := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if d.Spec.Replicas == nil || *d.Spec.Replicas != Replicas {
		fail("replicas: want %d, one delivering and one standing by", Replicas)
	}
	pod := d.Spec.Template.Spec
	if len(pod.Containers) != 1 {
		fail("want one container, the sweeper; have %d", len(pod.Containers))
		return errs
	}
	c := pod.Containers[0]
	if len(c.Args) == 0 || c.Args[0] != "sweep" {
		fail("container %s: args must begin with sweep", c.Name)
		return errs
	}
	vals, err := fl.Parse(c.Args[1:])
	if err != nil {
		errs = append(errs, err)
	}
	for _, need := range []string{"checkpoint", "lease", "metrics-addr", "log-format", "every"} {
		if _, ok := vals[need]; !ok {
			fail("container %s: no -%s", c.Name, need)
		}
	}
	if cp, ok := vals["checkpoint"]; ok && !strings.HasPrefix(cp, "bigtable:") {
		fail("-checkpoint %s: want bigtable:TABLE/KEY, a checkpoint the replicas share", cp)
	}
	if f, ok := vals["log-format"]; ok && f != "json" {
		fail("-log-format %s: want json", f)
	}
	addr, ok := vals["metrics-addr"]
	if !ok {
		return errs
	}
	_, p, err := net.SplitHostPort(addr)
	port, perr := strconv.Atoi(p)
	if err != nil || perr != nil {
		fail("-metrics-addr %s: want HOST:PORT", addr)
		return errs
	}
	portName := ""
	for _, cp := range c.Ports {
		if cp.ContainerPort == int32(port) {
			portName = cp.Name
		}
	}
	if portName == "" {
		fail("container %s: no port %d, the port of -metrics-addr", c.Name, port)
	}
	probe := func(kind string, pr *corev1.Probe, path string) {
		switch {
		case pr == nil || pr.HTTPGet == nil:
			fail("no %s probe (httpGet %s)", kind, path)
		case pr.HTTPGet.Path != path:
			fail("%s probe: path %q, want %s", kind, pr.HTTPGet.Path, path)
		case !samePort(pr.HTTPGet.Port, port, portName):
			fail("%s probe: port %s, want %d (-metrics-addr %s)", kind, pr.HTTPGet.Port.String(), port, addr)
		}
	}
	probe("liveness", c.LivenessProbe, "/healthz")
	probe("readiness", c.ReadinessProbe, "/readyz")
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if _, ok := c.Resources.Requests[r]; !ok {
			fail("container %s: no resources.requests.%s", c.Name, r)
		}
	}
	if _, ok := c.Resources.Limits[corev1.ResourceMemory]; !ok {
		fail("container %s: no resources.limits.memory", c.Name)
	}
	errs = append(errs, secure(pod, c)...)
	if sa := m.serviceAccount(d.Namespace, pod.ServiceAccountName); sa == nil {
		fail("serviceAccountName %q: no such ServiceAccount in namespace %q", pod.ServiceAccountName, d.Namespace)
	} else if sa.Annotations[WorkloadIdentity] == "" {
		fail("ServiceAccount %s: no %s annotation", sa.Name, WorkloadIdentity)
	}
	labels := d.Spec.Template.Labels
	scraped := false
	for _, pm := range m.PodMonitors {
		if pm.Namespace != d.Namespace || !matches(pm.Spec.Selector.MatchLabels, labels) {
			continue
		}
		for _, ep := range pm.Spec.PodMetricsEndpoints {
			path := ep.Path
			if path == "" {
				path = "/metrics"
			}
			scraped = scraped || ep.Port != nil && *ep.Port == portName && portName != "" && path == "/metrics"
		}
	}
	if !scraped {
		fail("no PodMonitor selects its pods (labels %s) on port %q, path /metrics", joinKeys(labels), portName)
	}
	budget := false
	for _, b := range m.Budgets {
		budget = budget || b.Namespace == d.Namespace && b.Spec.Selector != nil && matches(b.Spec.Selector.MatchLabels, labels)
	}
	if !budget {
		fail("no PodDisruptionBudget selects its pods: a drain could stop both replicas")
	}
	return errs
}

// samePort reports whether a probe's port is port, by number or by name.
func samePort(p intstr.IntOrString, port int, name string) bool {
	if p.Type == intstr.Int {
		return p.IntValue() == port
	}
	return name != "" && p.StrVal == name
}

// secure checks that the container runs as a non-root user, on a
// read-only root filesystem, without privilege escalation.
func secure(pod corev1.PodSpec, c corev1.Container) (errs []error) {
	nonRoot := pod.SecurityContext != nil && isTrue(pod.SecurityContext.RunAsNonRoot)
	sc := c.SecurityContext
	if sc != nil && sc.RunAsNonRoot != nil {
		nonRoot = *sc.RunAsNonRoot
	}
	if !nonRoot {
		errs = append(errs, fmt.Errorf("container %s: securityContext: runAsNonRoot is not true", c.Name))
	}
	if sc == nil || !isTrue(sc.ReadOnlyRootFilesystem) {
		errs = append(errs, fmt.Errorf("container %s: securityContext: readOnlyRootFilesystem is not true", c.Name))
	}
	if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		errs = append(errs, fmt.Errorf("container %s: securityContext: allowPrivilegeEscalation is not false", c.Name))
	}
	return errs
}

func isTrue(b *bool) bool { return b != nil && *b }
