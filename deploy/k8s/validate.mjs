// Checks every manifest in this directory against the Kubernetes API's JSON schemas, as packaged by the npm
// package kubernetes-models (each model's validate() runs the schema of its apiVersion and kind), then the
// links between them: the names and labels that must agree for the StatefulSet to work. Run by
// deploy/k8s/validate.sh, which installs the two packages it needs; exits 1 on the first list of problems.
import { readFileSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import yaml from "js-yaml";
import { Service } from "kubernetes-models/v1";
import { StatefulSet } from "kubernetes-models/apps/v1";
import { PodDisruptionBudget } from "kubernetes-models/policy/v1";
import { NetworkPolicy } from "kubernetes-models/networking.k8s.io/v1";

const models = { "v1/Service": Service, "apps/v1/StatefulSet": StatefulSet, "policy/v1/PodDisruptionBudget": PodDisruptionBudget,
  "networking.k8s.io/v1/NetworkPolicy": NetworkPolicy };
// The manifests: this directory, or ROTA_K8S_DIR (validate.sh copies this file next to its node_modules).
const here = process.env.ROTA_K8S_DIR ?? dirname(fileURLToPath(import.meta.url));
const problems = [];
const objects = [];
for (const file of readdirSync(here).filter((f) => f.endsWith(".yaml") && f !== "kustomization.yaml").sort()) {
  for (const doc of yaml.loadAll(readFileSync(join(here, file), "utf8"))) {
    const Model = models[`${doc.apiVersion}/${doc.kind}`];
    if (!Model) {
      problems.push(`${file}: no schema here for ${doc.apiVersion} ${doc.kind}`);
      continue;
    }
    try {
      new Model(doc).validate();
      console.log(`ok   ${file}: ${doc.kind} ${doc.metadata.name} (schema ${doc.apiVersion})`);
      objects.push(doc);
    } catch (e) {
      problems.push(`${file}: ${doc.kind} ${doc.metadata?.name}: ${e.message}`);
    }
  }
}
const kustomization = yaml.load(readFileSync(join(here, "kustomization.yaml"), "utf8"));
const listed = new Set(kustomization.resources);
for (const file of readdirSync(here).filter((f) => f.endsWith(".yaml") && f !== "kustomization.yaml")) {
  if (!listed.has(file)) problems.push(`kustomization.yaml does not list ${file}`);
}

const find = (kind, pred = () => true) => objects.find((o) => o.kind === kind && pred(o));
const sts = find("StatefulSet");
const headless = find("Service", (s) => s.spec.clusterIP === "None");
const pdb = find("PodDisruptionBudget");
const check = (ok, what) => { if (ok) console.log(`ok   ${what}`); else problems.push(what); };
if (sts && headless && pdb) {
  const labels = sts.spec.template.metadata.labels;
  const selects = (sel) => Object.entries(sel).every(([k, v]) => labels[k] === v);
  check(sts.spec.serviceName === headless.metadata.name, `the StatefulSet's serviceName is the headless Service (${headless.metadata.name})`);
  check(headless.spec.publishNotReadyAddresses === true, "the headless Service publishes members before they are Ready");
  check(selects(headless.spec.selector), "the headless Service selects the pods");
  check(objects.filter((o) => o.kind === "Service").every((s) => selects(s.spec.selector)), "every Service selects the pods");
  check(selects(pdb.spec.selector.matchLabels), "the PodDisruptionBudget selects the pods");
  check(pdb.spec.minAvailable === Math.floor(sts.spec.replicas / 2) + 1, `minAvailable ${pdb.spec.minAvailable} is a majority of ${sts.spec.replicas}`);
  check(sts.spec.podManagementPolicy === "Parallel", "members start in parallel (Ready needs a leader, a leader needs two members)");
  const c = sts.spec.template.spec.containers[0];
  check(c.readinessProbe?.httpGet?.path === "/health", "readiness is GET /health");
  const mounts = c.volumeMounts.map((m) => m.name);
  check(sts.spec.volumeClaimTemplates.every((t) => mounts.includes(t.metadata.name)), "every volume claim is mounted");
  const arg = (flag) => c.args.find((a) => a.startsWith(`--${flag}=`))?.slice(flag.length + 3);
  const cluster = arg("initial-cluster").split(",");
  const expected = [...Array(sts.spec.replicas).keys()].map((i) => `${sts.metadata.name}-${i}=${sts.metadata.name}-${i}.${headless.metadata.name}.$(POD_NAMESPACE).svc.cluster.local:7101`);
  check(JSON.stringify(cluster) === JSON.stringify(expected), `--initial-cluster names the ${sts.spec.replicas} pods by their stable DNS names`);
  check(arg("advertise-peer") === `$(POD_NAME).${headless.metadata.name}.$(POD_NAMESPACE).svc.cluster.local:7101`, "--advertise-peer is the pod's own stable name");
  check(arg("data-dir").startsWith(c.volumeMounts[0].mountPath + "/"), "--data-dir is on the persistent volume");
  const ports = Object.fromEntries(c.ports.map((p) => [p.name, p.containerPort]));
  check(arg("listen-peer") === `0.0.0.0:${ports.peer}` && arg("listen-client") === `0.0.0.0:${ports.client}` && arg("http") === `$(POD_IP):${ports.http}`, "the listen flags bind the container ports");

  // Issue 33: secure from the first start.
  const tlsFlags = ["cert-file", "key-file", "trusted-ca-file", "peer-cert-file", "peer-key-file", "peer-trusted-ca-file"];
  check(tlsFlags.every((f) => arg(f)), `TLS on the client and peer ports (--${tlsFlags.join(", --")})`);
  check(c.args.includes("--client-cert-auth"), "client certificates are required (--client-cert-auth)");
  const secretMounts = c.volumeMounts.filter((m) => sts.spec.template.spec.volumes?.some((v) => v.name === m.name && v.secret));
  check(tlsFlags.every((f) => secretMounts.some((m) => arg(f)?.startsWith(m.mountPath + "/"))), "the TLS files come from a mounted Secret");
  check(!arg("http")?.startsWith("0.0.0.0") && !arg("http")?.startsWith("[::]"), "HTTP does not bind every interface");
  check(c.readinessProbe?.httpGet?.scheme === "HTTPS", "the probe speaks HTTPS (the HTTP port serves TLS with the client port's certificate)");
  const bytes = (v) => { const m = /^(\d+)([kmgKMG]i?)?$/.exec(v ?? ""); if (!m) return NaN; const u = { k: 2 ** 10, m: 2 ** 20, g: 2 ** 30 }[(m[2] ?? "").charAt(0).toLowerCase()] ?? 1; return Number(m[1]) * u; };
  const javaOpts = c.env?.find((e) => e.name === "JAVA_TOOL_OPTIONS")?.value ?? "";
  const heap = bytes(/-Xmx(\S+)/.exec(javaOpts)?.[1]);
  const quota = Number(arg("quota-backend-bytes"));
  const limit = bytes(c.resources?.limits?.memory);
  check(quota > 0, `--quota-backend-bytes is set (${quota})`);
  check(heap >= 4 * quota, `the heap (${heap} bytes, -Xmx in JAVA_TOOL_OPTIONS) is at least 4 x the quota (${quota})`);
  check(limit >= heap + 2 ** 30, `the memory limit (${limit}) leaves at least 1 GiB beyond the heap for RocksDB and the JVM`);
}
const netpol = find("NetworkPolicy");
check(netpol !== undefined, "a NetworkPolicy is present");
if (netpol && sts) {
  const labels = sts.spec.template.metadata.labels;
  const selectsPods = (sel) => sel && Object.entries(sel.matchLabels ?? {}).every(([k, v]) => labels[k] === v) && Object.keys(sel.matchLabels ?? {}).length > 0;
  check(selectsPods(netpol.spec.podSelector), "the NetworkPolicy applies to the members");
  const peerRules = netpol.spec.ingress.filter((r) => r.ports?.some((p) => p.port === 7101));
  check(peerRules.length > 0 && peerRules.every((r) => r.from?.length > 0 && r.from.every((f) => selectsPods(f.podSelector) && !f.namespaceSelector && !f.ipBlock)),
    "the peer port admits only the StatefulSet's own pods");
  check(netpol.spec.ingress.every((r) => r.from?.length > 0 && r.ports?.length > 0), "every ingress rule names its sources and ports (no open rule)");
}
if (problems.length) {
  console.error(`\n${problems.length} problem(s):\n  ${problems.join("\n  ")}`);
  process.exit(1);
}
console.log("\nevery manifest matches its Kubernetes schema, and they agree with each other");
