package check

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/yaml"
)

// ErrManifest reports a Kubernetes manifest that does not parse into its
// typed object (an unknown field included), or a deployment of the
// sweeper that would not run as docs/deploy.md says.
var ErrManifest = errors.New("manifest")

// Manifests holds the objects of a folder of Kubernetes manifests.
type Manifests struct {
	Deployments     []*appsv1.Deployment
	ServiceAccounts []*corev1.ServiceAccount
	PodMonitors     []*monitoringv1.PodMonitor
	Budgets         []*policyv1.PodDisruptionBudget
	Namespaces      []*corev1.Namespace
}

var docSep = regexp.MustCompile(`(?m)^---\s*$`)

// ParseManifests reads every .yaml file in dir, each document strictly
// into the typed object its apiVersion and kind name: an unknown field, a
// misspelt one or a value of the wrong type fails, as do a kind the check
// does not know.
func ParseManifests(dir string) (*Manifests, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("%w: %s: no .yaml file", ErrManifest, dir)
	}
	sort.Strings(files)
	m := &Manifests{}
	var errs []error
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		for i, doc := range docSep.Split(string(b), -1) {
			if err := m.add(doc); err != nil {
				errs = append(errs, fmt.Errorf("%w: %s, document %d: %w", ErrManifest, f, i+1, err))
			}
		}
	}
	return m, errors.Join(errs...)
}

// add decodes one YAML document into its typed object.
func (m *Manifests) add(doc string) error {
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
		return err
	}
	var obj any
	switch head.APIVersion + " " + head.Kind {
	case " ":
		return nil // a document of comments only
	case "apps/v1 Deployment":
		o := &appsv1.Deployment{}
		m.Deployments, obj = append(m.Deployments, o), o
	case "v1 ServiceAccount":
		o := &corev1.ServiceAccount{}
		m.ServiceAccounts, obj = append(m.ServiceAccounts, o), o
	case "v1 Namespace":
		o := &corev1.Namespace{}
		m.Namespaces, obj = append(m.Namespaces, o), o
	case "policy/v1 PodDisruptionBudget":
		o := &policyv1.PodDisruptionBudget{}
		m.Budgets, obj = append(m.Budgets, o), o
	case "monitoring.coreos.com/v1 PodMonitor":
		o := &monitoringv1.PodMonitor{}
		m.PodMonitors, obj = append(m.PodMonitors, o), o
	default:
		return fmt.Errorf("apiVersion %q kind %q: not a kind the check knows", head.APIVersion, head.Kind)
	}
	return yaml.UnmarshalStrict([]byte(doc), obj)
}

// serviceAccount returns the service account named name in namespace ns.
func (m *Manifests) serviceAccount(ns, name string) *corev1.ServiceAccount {
	for _, sa := range m.ServiceAccounts {
		if sa.Namespace == ns && sa.Name == name {
			return sa
		}
	}
	return nil
}

// matches reports whether a selector's labels are all among labels.
func matches(selector, labels map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// joinKeys lists a map's keys, sorted, for messages.
func joinKeys(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return strings.Join(keys, ", ")
}
