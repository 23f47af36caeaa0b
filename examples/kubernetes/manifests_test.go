// Package kubernetes holds the Kubernetes deployment of a sharded suite (an Indexed Job per
// matrix, a merge Job, the store's Secret); its test decodes the manifests strictly into the
// Kubernetes API types and checks that they agree with each other and with inferbench's flags.
package kubernetes

import (
	"os"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"
)

// decode reads a manifest strictly: an unknown or misspelt field is an error, as it would be
// for kubectl apply --validate=strict.
func decode(t *testing.T, file string, into any) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(data, into); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}

func env(c corev1.Container, name string) *corev1.EnvVar {
	for i := range c.Env {
		if c.Env[i].Name == name {
			return &c.Env[i]
		}
	}
	return nil
}

func TestStrictDecodingRejectsUnknownFields(t *testing.T) {
	var j batchv1.Job
	bad := []byte("apiVersion: batch/v1\nkind: Job\nspec:\n  completionsMode: Indexed\n")
	if err := yaml.UnmarshalStrict(bad, &j); err == nil || !strings.Contains(err.Error(), "completionsMode") {
		t.Fatalf("a misspelt field decoded: %v", err)
	}
}

func TestManifests(t *testing.T) {
	var secret corev1.Secret
	var matrix, merge batchv1.Job
	decode(t, "secret.yaml", &secret)
	decode(t, "matrix-job.yaml", &matrix)
	decode(t, "merge-job.yaml", &merge)
	if secret.Kind != "Secret" || matrix.Kind != "Job" || merge.Kind != "Job" || matrix.APIVersion != "batch/v1" {
		t.Fatalf("kinds: %s %s %s", secret.Kind, matrix.Kind, merge.Kind)
	}
	if _, ok := secret.StringData["url"]; !ok || !strings.HasPrefix(secret.StringData["url"], "postgres://") {
		t.Errorf("secret %s has no postgres url", secret.Name)
	}

	// The matrix: an Indexed Job whose JOB_COMPLETIONS is its completions, so that --shard auto
	// splits the suite into exactly as many shards as there are pods.
	spec := matrix.Spec
	if spec.CompletionMode == nil || *spec.CompletionMode != batchv1.IndexedCompletion || spec.Completions == nil {
		t.Fatal("matrix job is not an Indexed Job with completions")
	}
	pod := spec.Template.Spec
	if pod.RestartPolicy != corev1.RestartPolicyNever || len(pod.Containers) != 1 {
		t.Fatalf("matrix pod: restart %s, %d containers", pod.RestartPolicy, len(pod.Containers))
	}
	c := pod.Containers[0]
	if e := env(c, "JOB_COMPLETIONS"); e == nil || e.Value != itoa(*spec.Completions) {
		t.Errorf("JOB_COMPLETIONS %v, completions %d", e, *spec.Completions)
	}
	if spec.Parallelism == nil || *spec.Parallelism > *spec.Completions {
		t.Errorf("parallelism %v exceeds completions", spec.Parallelism)
	}
	args := append(slices.Clone(c.Command), c.Args...)
	if !slices.Contains(args, "run") || !slices.Contains(args, "--shard=auto") {
		t.Errorf("matrix command %v does not run --shard=auto", args)
	}
	gpu := corev1.ResourceName("nvidia.com/gpu")
	if q, ok := c.Resources.Requests[gpu]; !ok || q.Cmp(resource.MustParse("1")) != 0 {
		t.Errorf("matrix container requests no GPU: %v", c.Resources.Requests)
	}
	if c.Resources.Limits[gpu] != c.Resources.Requests[gpu] {
		t.Errorf("extended resources need limits equal to requests")
	}
	g := env(c, "INFERBENCH_GROUP")
	if g == nil || g.ValueFrom == nil || g.ValueFrom.FieldRef == nil || g.ValueFrom.FieldRef.FieldPath != "metadata.labels['batch.kubernetes.io/job-name']" {
		t.Fatalf("matrix INFERBENCH_GROUP is not the Job's name: %+v", g)
	}

	// The store: a Secret reference in both Jobs, to the Secret above.
	for _, j := range []batchv1.Job{matrix, merge} {
		c := j.Spec.Template.Spec.Containers[0]
		s := env(c, "INFERBENCH_STORE")
		if s == nil || s.ValueFrom == nil || s.ValueFrom.SecretKeyRef == nil {
			t.Fatalf("%s: INFERBENCH_STORE is not from a Secret", j.Name)
		}
		if ref := s.ValueFrom.SecretKeyRef; ref.Name != secret.Name || secret.StringData[ref.Key] == "" {
			t.Errorf("%s: INFERBENCH_STORE refers to %s/%s, not the Secret's key", j.Name, ref.Name, ref.Key)
		}
	}

	// The merge: reads the matrix Job's group and gates.
	mc := merge.Spec.Template.Spec.Containers[0]
	margs := append(slices.Clone(mc.Command), mc.Args...)
	if !slices.Contains(margs, "merge") || !slices.Contains(margs, "--group=$(INFERBENCH_GROUP)") {
		t.Errorf("merge command %v", margs)
	}
	if e := env(mc, "INFERBENCH_GROUP"); e == nil || e.Value != matrix.Name {
		t.Errorf("merge group %v, matrix job %s", e, matrix.Name)
	}
	if merge.Spec.BackoffLimit == nil || *merge.Spec.BackoffLimit != 0 {
		t.Errorf("the merge Job must not retry a failed gate")
	}
}

// TestAgentsJob: the load agents' Indexed Job runs as many agents as it has pods, all at once,
// meeting at the store's barrier.
func TestAgentsJob(t *testing.T) {
	var secret corev1.Secret
	var j batchv1.Job
	decode(t, "secret.yaml", &secret)
	decode(t, "agents-job.yaml", &j)
	spec := j.Spec
	if spec.CompletionMode == nil || *spec.CompletionMode != batchv1.IndexedCompletion || spec.Completions == nil || spec.Parallelism == nil {
		t.Fatal("agents job is not an Indexed Job with completions and parallelism")
	}
	if *spec.Parallelism != *spec.Completions {
		t.Errorf("parallelism %d != completions %d: the barrier waits for every agent at once", *spec.Parallelism, *spec.Completions)
	}
	if spec.BackoffLimit == nil || *spec.BackoffLimit != 0 {
		t.Error("a retried agent would start alone: backoffLimit must be 0")
	}
	c := spec.Template.Spec.Containers[0]
	n := itoa(*spec.Completions)
	if e := env(c, "JOB_COMPLETIONS"); e == nil || e.Value != n {
		t.Errorf("JOB_COMPLETIONS %v, completions %s", e, n)
	}
	for _, want := range []string{"run", "--agents=" + n, "--agent=auto", "--start-at=barrier"} {
		if !slices.Contains(c.Args, want) {
			t.Errorf("agent args %v lack %s", c.Args, want)
		}
	}
	if s := env(c, "INFERBENCH_STORE"); s == nil || s.ValueFrom == nil || s.ValueFrom.SecretKeyRef == nil || s.ValueFrom.SecretKeyRef.Name != secret.Name {
		t.Errorf("the barrier needs the shared store from the Secret: %+v", s)
	}
	if g := env(c, "INFERBENCH_GROUP"); g == nil || g.ValueFrom == nil || g.ValueFrom.FieldRef == nil {
		t.Errorf("INFERBENCH_GROUP is not the Job's name: %+v", g)
	}
}

func itoa(n int32) string {
	return strings.TrimSpace(resource.NewQuantity(int64(n), resource.DecimalSI).String())
}
