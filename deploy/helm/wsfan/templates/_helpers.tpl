{{/* The release's resource name, at most 63 characters. */}}
{{- define "wsfan.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* The labels that select the release's pods. */}}
{{- define "wsfan.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* Every resource's labels. */}}
{{- define "wsfan.labels" -}}
{{ include "wsfan.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* The image reference: repository@digest, or repository:tag. */}}
{{- define "wsfan.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}
{{- end -}}

{{/* Where the NATS files of secret.name are mounted. */}}
{{- define "wsfan.natsDir" -}}/etc/wsfan/nats{{- end -}}

{{/*
The -config file: config, with the settings the chart owns. listen is
every address of the pod (probes and the Service reach it by the pod's
IP, which the sidecar then serves); allowed_hosts adds the Service's DNS
names, which its Host check would otherwise refuse.
*/}}
{{- define "wsfan.configFile" -}}
{{- $name := include "wsfan.fullname" . -}}
{{- $ns := .Release.Namespace -}}
{{- $c := deepCopy .Values.config -}}
{{- $_ := set $c "listen" (printf "0.0.0.0:%v" .Values.service.port) -}}
{{- $hosts := list $name (printf "%s.%s" $name $ns) (printf "%s.%s.svc" $name $ns) (printf "%s.%s.svc.cluster.local" $name $ns) -}}
{{- $_ := set $c "allowed_hosts" (concat $hosts .Values.allowedHosts) -}}
{{- if .Values.hotStandby -}}
{{- $_ := set $c "hot_standby" .Values.hotStandby -}}
{{- end -}}
{{- with .Values.nats -}}
{{- if .urls -}}
{{- $_ := set $c "nats" .urls -}}
{{- $_ := set $c "nats_group" .group -}}
{{- $dir := include "wsfan.natsDir" $ -}}
{{- if .credsKey }}{{ $_ := set $c "nats_creds" (printf "%s/creds" $dir) }}{{ end -}}
{{- if .tlsCAKey }}{{ $_ := set $c "nats_tls_ca" (printf "%s/ca.pem" $dir) }}{{ end -}}
{{- if .tlsCertKey }}{{ $_ := set $c "nats_tls_cert" (printf "%s/cert.pem" $dir) }}{{ end -}}
{{- if .tlsKeyKey }}{{ $_ := set $c "nats_tls_key" (printf "%s/key.pem" $dir) }}{{ end -}}
{{- end -}}
{{- end -}}
{{- toYaml $c -}}
{{- end -}}

{{/* Whether any NATS file is mounted from secret.name. */}}
{{- define "wsfan.natsFiles" -}}
{{- with .Values.nats -}}
{{- if and .urls (or .credsKey .tlsCAKey .tlsCertKey .tlsKeyKey) -}}true{{- end -}}
{{- end -}}
{{- end -}}
