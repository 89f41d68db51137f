package kubernetes

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/shakedown/shakedown/internal/cli"
	"github.com/shakedown/shakedown/internal/plan"
	"github.com/shakedown/shakedown/internal/segment"
	"github.com/shakedown/shakedown/internal/sweep"
	_ "github.com/shakedown/shakedown/internal/workload/all"
)

// manifests are the decoded objects of every *.yaml file here.
type manifests struct {
	jobs       []*batchv1.Job
	cronJobs   []*batchv1.CronJob
	configMaps map[string]*corev1.ConfigMap
	secrets    map[string]*corev1.Secret
}

// load decodes every document of every manifest strictly: a field the
// Kubernetes API does not have (a typo, a wrong indent) fails the test, as
// would a kind this test does not know.
func load(t *testing.T) *manifests {
	t.Helper()
	files, err := filepath.Glob("*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests: %v", err)
	}
	m := &manifests{configMaps: map[string]*corev1.ConfigMap{}, secrets: map[string]*corev1.Secret{}}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range bytes.Split(src, []byte("\n---")) {
			if len(bytes.TrimSpace(doc)) == 0 {
				continue
			}
			where := fmt.Sprintf("%s document %d", f, i+1)
			var tm metav1.TypeMeta
			if err := yaml.Unmarshal(doc, &tm); err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			var obj any
			switch tm.APIVersion + " " + tm.Kind {
			case "batch/v1 Job":
				j := &batchv1.Job{}
				m.jobs, obj = append(m.jobs, j), j
			case "batch/v1 CronJob":
				j := &batchv1.CronJob{}
				m.cronJobs, obj = append(m.cronJobs, j), j
			case "v1 ConfigMap":
				obj = &corev1.ConfigMap{}
			case "v1 Secret":
				obj = &corev1.Secret{}
			default:
				t.Fatalf("%s: kind %q of %q is not one this test checks", where, tm.Kind, tm.APIVersion)
			}
			if err := yaml.UnmarshalStrict(doc, obj); err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			switch o := obj.(type) {
			case *corev1.ConfigMap:
				m.configMaps[o.Name] = o
			case *corev1.Secret:
				m.secrets[o.Name] = o
			}
		}
	}
	return m
}

func TestStrictDecodingRefusesUnknownFields(t *testing.T) {
	doc := []byte("apiVersion: batch/v1\nkind: Job\nspec:\n  completionsMode: Indexed\n")
	if err := yaml.UnmarshalStrict(doc, &batchv1.Job{}); err == nil || !strings.Contains(err.Error(), "completionsMode") {
		t.Errorf("a misspelt field: got %v, want an error naming completionsMode", err)
	}
}

// TestManifests checks the Job, ConfigMap and Secret together: an Indexed
// Job of N runners whose N command lines parse and whose segments cover the
// load exactly once, a plan that parses and has a timetable, passwords only
// from the Secret, and pods that run as non-root on a read-only root.
func TestManifests(t *testing.T) {
	m := load(t)
	if len(m.jobs) != 1 {
		t.Fatalf("got %d Jobs, want 1", len(m.jobs))
	}
	job := m.jobs[0]
	spec := job.Spec
	if spec.CompletionMode == nil || *spec.CompletionMode != batchv1.IndexedCompletion {
		t.Errorf("completionMode: got %v, want Indexed", spec.CompletionMode)
	}
	if spec.Completions == nil || spec.Parallelism == nil || *spec.Completions != *spec.Parallelism || *spec.Completions < 2 {
		t.Fatalf("completions %v and parallelism %v: want them equal (every runner at once) and >= 2", spec.Completions, spec.Parallelism)
	}
	n := int(*spec.Completions)
	pod := spec.Template.Spec
	if pod.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("restartPolicy: got %q, want Never (a runner restarted late would drive its segment out of step)", pod.RestartPolicy)
	}
	checkSecurity(t, pod)
	checkAntiAffinity(t, pod, spec.Template.Labels)
	if len(pod.Containers) != 1 {
		t.Fatalf("got %d containers, want the runner alone", len(pod.Containers))
	}
	c := pod.Containers[0]

	// The ConfigMap made at each run by docs/kubernetes.md's kubectl command.
	start := time.Now().Add(2 * time.Minute).UTC().Format(time.RFC3339)
	m.configMaps["shakedown-start"] = &corev1.ConfigMap{Data: map[string]string{"start-at": start}}

	var segs []segment.Segment
	for k := range n {
		env := containerEnv(t, m, c, map[string]string{"JOB_COMPLETION_INDEX": strconv.Itoa(k)})
		args := expand(c.Args, env)
		if strings.Contains(strings.Join(args, " "), "$(") {
			t.Fatalf("runner %d: %q refers to a variable the container does not have", k, args)
		}
		if !strings.Contains(strings.Join(args, " "), "--segments="+strconv.Itoa(n)) {
			t.Errorf("runner %d: args %q: want --segments=%d, as many as completions", k, args, n)
		}
		sp, err := cli.CheckArgs(&cli.Env{Getenv: func(k string) string { return env[k] }}, args)
		if err != nil {
			t.Fatalf("runner %d: shakedown %s: %v", k, strings.Join(args, " "), err)
		}
		if want := fmt.Sprintf("%d/%d", k+1, n); sp.Label() != want {
			t.Errorf("runner %d: got segment %s, want %s", k, sp.Label(), want)
		}
		if !sp.StartAt.Equal(mustTime(t, start)) {
			t.Errorf("runner %d: starts at %v, want %s", k, sp.StartAt, start)
		}
		segs = append(segs, sp.Segment)

		if k == 0 {
			checkPlan(t, m, pod, c, args, env)
		}
	}
	if err := segment.Cover(segs); err != nil {
		t.Errorf("the runners' segments: %v", err)
	}
}

func checkSecurity(t *testing.T, pod corev1.PodSpec) {
	t.Helper()
	psc := pod.SecurityContext
	if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.RunAsUser == nil || *psc.RunAsUser == 0 {
		t.Errorf("pod securityContext: got %+v, want runAsNonRoot and a numeric non-zero runAsUser", psc)
	}
	if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		t.Errorf("automountServiceAccountToken: want false (the runner never talks to the API server)")
	}
	writable := map[string]bool{}
	for _, v := range pod.Volumes {
		if v.EmptyDir != nil {
			writable[v.Name] = true
		}
	}
	for _, c := range pod.Containers {
		sc := c.SecurityContext
		switch {
		case sc == nil:
			t.Fatalf("container %s: no securityContext", c.Name)
		case sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem:
			t.Errorf("container %s: want readOnlyRootFilesystem: true", c.Name)
		case sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation:
			t.Errorf("container %s: want allowPrivilegeEscalation: false", c.Name)
		case sc.Capabilities == nil || len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL" || len(sc.Capabilities.Add) > 0:
			t.Errorf("container %s: capabilities %+v, want drop ALL and nothing added", c.Name, sc.Capabilities)
		}
		// Whatever shakedown writes goes under SHAKEDOWN_HOME: it must be
		// on a writable volume.
		home := ""
		for _, e := range c.Env {
			if e.Name == "SHAKEDOWN_HOME" {
				home = e.Value
			}
		}
		ok := false
		for _, vm := range c.VolumeMounts {
			if writable[vm.Name] && !vm.ReadOnly && home != "" && strings.HasPrefix(home+"/", strings.TrimSuffix(vm.MountPath, "/")+"/") {
				ok = true
			}
		}
		if !ok {
			t.Errorf("container %s: SHAKEDOWN_HOME %q is not on a writable emptyDir", c.Name, home)
		}
	}
}

func checkAntiAffinity(t *testing.T, pod corev1.PodSpec, labels map[string]string) {
	t.Helper()
	if pod.Affinity == nil || pod.Affinity.PodAntiAffinity == nil {
		t.Fatal("no pod anti-affinity: runners could crowd onto one node")
	}
	terms := pod.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution
	if len(terms) == 0 {
		t.Fatal("pod anti-affinity: want a preferred term (optional spreading)")
	}
	term := terms[0].PodAffinityTerm
	if term.TopologyKey != "kubernetes.io/hostname" || term.LabelSelector == nil {
		t.Fatalf("pod anti-affinity: got %+v, want one runner per host by a label selector", term)
	}
	for k, v := range term.LabelSelector.MatchLabels {
		if labels[k] != v {
			t.Errorf("anti-affinity selects %s=%s, which the runners' pods do not carry (they have %v)", k, v, labels)
		}
	}
}

// containerEnv is the container's environment as the kubelet builds it,
// values from the manifests' ConfigMaps and Secrets, plus extra (what the
// Job controller adds).
func containerEnv(t *testing.T, m *manifests, c corev1.Container, extra map[string]string) map[string]string {
	t.Helper()
	env := map[string]string{}
	for k, v := range extra {
		env[k] = v
	}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			env[e.Name] = expand([]string{e.Value}, env)[0]
		case e.ValueFrom.SecretKeyRef != nil:
			ref := e.ValueFrom.SecretKeyRef
			s, ok := m.secrets[ref.Name]
			if !ok {
				t.Fatalf("env %s: no Secret %s among the manifests", e.Name, ref.Name)
			}
			v, ok := s.StringData[ref.Key]
			if !ok {
				t.Fatalf("env %s: Secret %s has no key %s", e.Name, ref.Name, ref.Key)
			}
			env[e.Name] = v
		case e.ValueFrom.ConfigMapKeyRef != nil:
			ref := e.ValueFrom.ConfigMapKeyRef
			cm, ok := m.configMaps[ref.Name]
			if !ok {
				t.Fatalf("env %s: no ConfigMap %s", e.Name, ref.Name)
			}
			v, ok := cm.Data[ref.Key]
			if !ok {
				t.Fatalf("env %s: ConfigMap %s has no key %s", e.Name, ref.Name, ref.Key)
			}
			env[e.Name] = v
		default:
			t.Fatalf("env %s: a source this test does not resolve", e.Name)
		}
	}
	return env
}

var varRef = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// expand replaces $(VAR) with the variable's value, as the kubelet does in
// args; an unknown variable is left as written.
func expand(args []string, env map[string]string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = varRef.ReplaceAllStringFunc(a, func(ref string) string {
			if v, ok := env[ref[2:len(ref)-1]]; ok {
				return v
			}
			return ref
		})
	}
	return out
}

// checkPlan finds the plan the runner is given in its ConfigMap volume and
// parses it with the runner's environment: every target's password comes
// from a variable the container has, and the plan has a timetable (steps
// of fixed length) so the runners can start each step together.
func checkPlan(t *testing.T, m *manifests, pod corev1.PodSpec, c corev1.Container, args []string, env map[string]string) {
	t.Helper()
	p := parsePlan(t, m, pod, c, args[1], env)
	if err := sweep.CheckTimetable(p); err != nil {
		t.Errorf("plan: no timetable: %v", err)
	}
}

// parsePlan finds the plan at path in a ConfigMap mounted in the container
// and parses it with the container's environment: every target's
// password comes from a variable the container takes from the Secret.
func parsePlan(t *testing.T, m *manifests, pod corev1.PodSpec, c corev1.Container, path string, env map[string]string) *plan.Plan {
	t.Helper()
	var src string
	for _, vm := range c.VolumeMounts {
		if !strings.HasPrefix(path, strings.TrimSuffix(vm.MountPath, "/")+"/") {
			continue
		}
		for _, v := range pod.Volumes {
			if v.Name == vm.Name && v.ConfigMap != nil {
				cm, ok := m.configMaps[v.ConfigMap.Name]
				if !ok {
					t.Fatalf("volume %s: no ConfigMap %s", v.Name, v.ConfigMap.Name)
				}
				src = cm.Data[strings.TrimPrefix(path, strings.TrimSuffix(vm.MountPath, "/")+"/")]
			}
		}
	}
	if src == "" {
		t.Fatalf("the plan %s is in no ConfigMap mounted in the container", path)
	}
	p, err := sweep.ParsePlan(path, []byte(src), func(k string) string { return env[k] })
	if err != nil {
		t.Fatalf("plan in the ConfigMap: %v", err)
	}
	for _, tg := range p.Targets {
		if tg.PasswordEnv == "" || env[tg.PasswordEnv] == "" {
			t.Errorf("target %s: password_env %q: want a variable the container takes from the Secret", tg.Name, tg.PasswordEnv)
		}
	}
	return p
}

var cronField = regexp.MustCompile(`^(\*|[0-9]+(-[0-9]+)?)(/[0-9]+)?(,(\*|[0-9]+(-[0-9]+)?)(/[0-9]+)?)*$`)

// TestBaselineCronJob checks the long-term baseline: a CronJob that runs
// one sweep a night against a saved baseline, never two at once, whose Job
// fails on the sweep's exit 3 (slower than the baseline) without a retry;
// its command line parses as the binary's, with --baseline and a store
// that outlives the pod; its plan parses with the passwords from the
// Secret; and its pod is locked down as the runners' are.
func TestBaselineCronJob(t *testing.T) {
	m := load(t)
	if len(m.cronJobs) != 1 {
		t.Fatalf("got %d CronJobs, want 1 (the nightly baseline)", len(m.cronJobs))
	}
	cj := m.cronJobs[0]
	fields := strings.Fields(cj.Spec.Schedule)
	if len(fields) != 5 {
		t.Errorf("schedule %q: want 5 fields (minute hour day month weekday)", cj.Spec.Schedule)
	}
	for _, f := range fields {
		if !cronField.MatchString(f) {
			t.Errorf("schedule %q: field %q is not one cron reads", cj.Spec.Schedule, f)
		}
	}
	if cj.Spec.ConcurrencyPolicy != batchv1.ForbidConcurrent {
		t.Errorf("concurrencyPolicy: got %q, want Forbid (two sweeps at once load the same servers and measure each other)", cj.Spec.ConcurrencyPolicy)
	}
	spec := cj.Spec.JobTemplate.Spec
	if spec.BackoffLimit == nil || *spec.BackoffLimit != 0 {
		t.Errorf("backoffLimit: got %v, want 0 (a regression is a finding: a retry would hide it until it failed again)", spec.BackoffLimit)
	}
	pod := spec.Template.Spec
	if pod.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("restartPolicy: got %q, want Never (a restarted sweep would exit 0 or 3 without saying it had failed once)", pod.RestartPolicy)
	}
	checkSecurity(t, pod)
	if len(pod.Containers) != 1 {
		t.Fatalf("got %d containers, want the sweep alone", len(pod.Containers))
	}
	c := pod.Containers[0]
	failsOn3 := false
	if pfp := spec.PodFailurePolicy; pfp != nil {
		for _, r := range pfp.Rules {
			e := r.OnExitCodes
			if r.Action == batchv1.PodFailurePolicyActionFailJob && e != nil && e.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn &&
				(e.ContainerName == nil || *e.ContainerName == c.Name) && slices.Contains(e.Values, int32(cli.ExitDifferences)) {
				failsOn3 = true
			}
		}
	}
	if !failsOn3 {
		t.Errorf("podFailurePolicy: want a rule that fails the Job on exit %d of container %s (slower than the baseline)", cli.ExitDifferences, c.Name)
	}

	env := containerEnv(t, m, c, nil)
	args := expand(c.Args, env)
	if strings.Contains(strings.Join(args, " "), "$(") {
		t.Fatalf("%q refers to a variable the container does not have", args)
	}
	sp, err := cli.CheckArgs(&cli.Env{Getenv: func(k string) string { return env[k] }}, args)
	if err != nil {
		t.Fatalf("shakedown %s: %v", strings.Join(args, " "), err)
	}
	if sp.On {
		t.Errorf("args %q: a split sweep, want one pod's whole sweep", args)
	}
	baseline, storeURL := "", ""
	for i, a := range args {
		for _, flag := range []struct {
			name string
			into *string
		}{{"--baseline", &baseline}, {"--store", &storeURL}} {
			switch {
			case strings.HasPrefix(a, flag.name+"="):
				*flag.into = strings.TrimPrefix(a, flag.name+"=")
			case a == flag.name && i+1 < len(args):
				*flag.into = args[i+1]
			}
		}
	}
	if args[0] != "sweep" || baseline == "" {
		t.Errorf("args %q: want shakedown sweep PLAN --baseline NAME", args)
	}
	if !strings.HasPrefix(storeURL, "mysql://") {
		t.Errorf("--store %q: want the results database (mysql://...): a file in the pod is gone with it, and with it the baseline and the history", storeURL)
	}
	p := parsePlan(t, m, pod, c, args[1], env)
	if len(p.Targets) < 1 {
		t.Errorf("the nightly plan names no target")
	}
	if p.Prepare && !p.PrepareReplace {
		t.Errorf("the nightly plan says prepare: true, which refuses the data the first night left: want prepare: false (or replace)")
	}
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
