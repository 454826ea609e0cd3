package chart

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/yaml"
)

// dir is the chart under test.
const dir = "../../helm/wsfan"

var rel = Release{Name: "wsfan", Namespace: "markets"}

// fullValues sets every credential reference, NATS with its files, a hot
// standby, two replicas and the ServiceMonitor.
func fullValues() map[string]any {
	return map[string]any{
		"replicaCount": 2,
		"secret": map[string]any{
			"name": "venue-keys", "tokenKey": "tok", "upstreamKey": "url", "upstreamHeaderKey": "hdr",
		},
		"hotStandby": 1,
		"nats": map[string]any{
			"urls": []any{"nats://nats-0.nats:4222", "nats://nats-1.nats:4222"}, "group": "deribit-main",
			"credsKey": "nats.creds", "tlsCAKey": "ca", "tlsCertKey": "crt", "tlsKeyKey": "key",
		},
		"serviceMonitor": map[string]any{"enabled": true},
	}
}

// objects are the rendered manifests, decoded.
type objects struct {
	kinds      []string
	deployment appsv1.Deployment
	config     map[string]any // the ConfigMap's sidecar.yaml
	pdb        *policyv1.PodDisruptionBudget
	monitor    map[string]any // the ServiceMonitor, if rendered
	notes      string
}

// render lints and renders the chart with vals and decodes what it needs.
func render(t *testing.T, vals map[string]any) objects {
	t.Helper()
	require.NoError(t, Lint(dir, vals, rel))
	r, err := Render(dir, vals, rel)
	require.NoError(t, err)
	o := objects{notes: r.Notes}
	for _, f := range r.Manifests {
		var meta struct{ Kind string }
		require.NoError(t, yaml.Unmarshal([]byte(f.Content), &meta), f.Name)
		o.kinds = append(o.kinds, meta.Kind)
		switch meta.Kind {
		case "Deployment":
			require.NoError(t, yaml.UnmarshalStrict([]byte(f.Content), &o.deployment), f.Name)
		case "ConfigMap":
			var cm corev1.ConfigMap
			require.NoError(t, yaml.UnmarshalStrict([]byte(f.Content), &cm), f.Name)
			require.NoError(t, yaml.Unmarshal([]byte(cm.Data["sidecar.yaml"]), &o.config))
		case "PodDisruptionBudget":
			o.pdb = new(policyv1.PodDisruptionBudget)
			require.NoError(t, yaml.UnmarshalStrict([]byte(f.Content), o.pdb), f.Name)
		case "ServiceMonitor":
			require.NoError(t, yaml.Unmarshal([]byte(f.Content), &o.monitor), f.Name)
		}
	}
	return o
}

// The Deployment probes /readyz for readiness and /healthz for liveness,
// runs non-root with a read-only root filesystem and no capabilities, and
// takes every credential through secretKeyRef: no env var has a literal
// value, no Secret is rendered, no credential key is in the ConfigMap.
func TestRenderedDeployment(t *testing.T) {
	for name, vals := range map[string]map[string]any{"defaults": {}, "full": fullValues()} {
		t.Run(name, func(t *testing.T) {
			o := render(t, vals)
			assert.NotContains(t, o.kinds, "Secret")
			pod := o.deployment.Spec.Template.Spec
			require.Len(t, pod.Containers, 1)
			c := pod.Containers[0]

			require.NotNil(t, c.ReadinessProbe)
			require.NotNil(t, c.ReadinessProbe.HTTPGet)
			assert.Equal(t, "/readyz", c.ReadinessProbe.HTTPGet.Path)
			require.NotNil(t, c.LivenessProbe)
			require.NotNil(t, c.LivenessProbe.HTTPGet)
			assert.Equal(t, "/healthz", c.LivenessProbe.HTTPGet.Path)

			require.NotNil(t, pod.SecurityContext)
			require.NotNil(t, pod.SecurityContext.RunAsNonRoot)
			assert.True(t, *pod.SecurityContext.RunAsNonRoot)
			sc := c.SecurityContext
			require.NotNil(t, sc)
			require.NotNil(t, sc.RunAsNonRoot)
			assert.True(t, *sc.RunAsNonRoot)
			require.NotNil(t, sc.ReadOnlyRootFilesystem)
			assert.True(t, *sc.ReadOnlyRootFilesystem)
			require.NotNil(t, sc.AllowPrivilegeEscalation)
			assert.False(t, *sc.AllowPrivilegeEscalation)
			require.NotNil(t, sc.Capabilities)
			assert.Equal(t, []corev1.Capability{"ALL"}, sc.Capabilities.Drop)
			assert.Empty(t, sc.Capabilities.Add)

			require.NotEmpty(t, c.Env)
			for _, e := range c.Env {
				assert.Empty(t, e.Value, "%s has a literal value", e.Name)
				require.NotNil(t, e.ValueFrom, e.Name)
				assert.NotNil(t, e.ValueFrom.SecretKeyRef, "%s is not from a Secret", e.Name)
			}
			assert.Empty(t, c.EnvFrom)
			for _, k := range []string{"token", "upstream_header"} {
				assert.NotContains(t, o.config, k)
			}

			require.NotNil(t, pod.Affinity)
			require.NotNil(t, pod.Affinity.PodAntiAffinity)
			assert.NotEmpty(t, pod.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution)
			assert.Contains(t, o.deployment.Spec.Template.Annotations, "checksum/config")
		})
	}
}

// With every reference set, each credential comes from its key of the
// named Secret, and the NATS files from the same Secret.
func TestRenderedSecretRefs(t *testing.T) {
	o := render(t, fullValues())
	c := o.deployment.Spec.Template.Spec.Containers[0]
	refs := map[string]string{}
	for _, e := range c.Env {
		require.NotNil(t, e.ValueFrom.SecretKeyRef)
		assert.Equal(t, "venue-keys", e.ValueFrom.SecretKeyRef.Name)
		refs[e.Name] = e.ValueFrom.SecretKeyRef.Key
	}
	assert.Equal(t, map[string]string{"WSFAN_TOKEN": "tok", "WSFAN_UPSTREAM": "url", "WSFAN_UPSTREAM_HEADER": "hdr"}, refs)

	var nats *corev1.SecretVolumeSource
	for _, v := range o.deployment.Spec.Template.Spec.Volumes {
		if v.Secret != nil {
			nats = v.Secret
		}
	}
	require.NotNil(t, nats, "no volume from the Secret")
	assert.Equal(t, "venue-keys", nats.SecretName)
	assert.Len(t, nats.Items, 4)
	assert.Equal(t, "/etc/wsfan/nats/creds", o.config["nats_creds"])
	assert.Equal(t, "deribit-main", o.config["nats_group"])
	assert.EqualValues(t, 1, o.config["hot_standby"])

	require.NotNil(t, o.monitor)
	ep := o.monitor["spec"].(map[string]any)["endpoints"].([]any)[0].(map[string]any)
	assert.Equal(t, "/metrics", ep["path"])
	assert.Equal(t, map[string]any{"name": "venue-keys", "key": "tok"}, ep["authorization"].(map[string]any)["credentials"])
}

// A credential given as a value, wherever a user might write one, is
// refused by the schema: lint and render fail and print nothing of it.
func TestCredentialValuesRefused(t *testing.T) {
	const canary = "canary-s3cr3t-9f2"
	for name, vals := range map[string]map[string]any{
		"config.token":           {"config": map[string]any{"token": canary}},
		"config.upstream_header": {"config": map[string]any{"upstream_header": "X-Api-Key: " + canary}},
		"upstream with userinfo": {"config": map[string]any{"upstream": "wss://user:" + canary + "@node.example/ws"}},
		"a token value":          {"token": canary},
		"secret.value":           {"secret": map[string]any{"name": "s", "tokenKey": "t", "value": canary}},
	} {
		t.Run(name, func(t *testing.T) {
			err := Lint(dir, vals, rel)
			require.Error(t, err)
			assert.NotContains(t, err.Error(), canary)
			r, err := Render(dir, vals, rel)
			require.Error(t, err)
			assert.NotContains(t, err.Error(), canary)
			assert.Empty(t, r.Manifests)
		})
	}
}

// The PodDisruptionBudget lets a drain evict the only replica (a
// minAvailable of 1 would block it forever).
func TestDisruptionBudgetDoesNotBlockDrains(t *testing.T) {
	o := render(t, map[string]any{"replicaCount": 1})
	require.NotNil(t, o.pdb)
	assert.Nil(t, o.pdb.Spec.MinAvailable)
	require.NotNil(t, o.pdb.Spec.MaxUnavailable)
	assert.GreaterOrEqual(t, o.pdb.Spec.MaxUnavailable.IntValue(), 1)
}

// Replicas above one without NATS are independent upstream connections,
// and the notes say so; in a NATS group they share one, and they do not.
func TestReplicasWithoutNATSNoted(t *testing.T) {
	o := render(t, map[string]any{"replicaCount": 3})
	assert.Contains(t, o.notes, "3 independent upstream")
	assert.NotContains(t, o.config, "nats")
	o = render(t, fullValues())
	assert.NotContains(t, o.notes, "independent upstream")
	assert.Equal(t, []any{"nats://nats-0.nats:4222", "nats://nats-1.nats:4222"}, o.config["nats"])
	o = render(t, map[string]any{})
	assert.False(t, strings.Contains(o.notes, "independent"))
}
