{{/* The objects' name: liveproof-controller for a release named liveproof (as deploy/controller.yaml). */}}
{{- define "liveproof.fullname" -}}
{{- if contains "liveproof" .Release.Name -}}
{{- printf "%s-controller" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-liveproof-controller" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "liveproof.serviceAccountName" -}}
{{- default (include "liveproof.fullname" .) .Values.serviceAccount.name -}}
{{- end -}}

{{/* What selects the controller's pods (stable across upgrades). */}}
{{- define "liveproof.selectorLabels" -}}
app.kubernetes.io/name: liveproof
app.kubernetes.io/component: controller
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "liveproof.labels" -}}
{{ include "liveproof.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}
