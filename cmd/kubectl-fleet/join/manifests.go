package join

import (
	"fmt"
	"io"
	"strings"
	"text/template"
)

// syncerManifests run the syncer inside the member cluster: it talks to the
// hub with the minted credential and to its own cluster with a
// ServiceAccount that may manage anything a placement can place.
var syncerManifests = template.Must(template.New("syncer").Parse(`apiVersion: v1
kind: Namespace
metadata:
  name: fleet-system
---
apiVersion: v1
kind: Secret
metadata:
  name: fleet-syncer-hub-kubeconfig
  namespace: fleet-system
stringData:
  kubeconfig: |
{{ .HubKubeconfig }}
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: fleet-syncer
  namespace: fleet-system
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: fleet-syncer
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: cluster-admin
subjects:
- kind: ServiceAccount
  name: fleet-syncer
  namespace: fleet-system
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: fleet-syncer
  namespace: fleet-system
spec:
  replicas: 1
  selector:
    matchLabels:
      app: fleet-syncer
  template:
    metadata:
      labels:
        app: fleet-syncer
    spec:
      serviceAccountName: fleet-syncer
      containers:
      - name: syncer
        image: {{ .Image }}
        args:
        - --hub-kubeconfig=/etc/fleet/hub/kubeconfig
        - --member-name={{ .Name }}
        ports:
        - name: metrics
          containerPort: 8090
        volumeMounts:
        - name: hub
          mountPath: /etc/fleet/hub
          readOnly: true
      volumes:
      - name: hub
        secret:
          secretName: fleet-syncer-hub-kubeconfig
`))

func printManifests(w io.Writer, name string, hubKubeconfig []byte, image string) error {
	fmt.Fprintf(w, "# Apply to member cluster %s to run its syncer there.\n", name)
	return syncerManifests.Execute(w, map[string]string{
		"Name":          name,
		"Image":         image,
		"HubKubeconfig": indent(string(hubKubeconfig), "    "),
	})
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return prefix + strings.Join(lines, "\n"+prefix)
}
