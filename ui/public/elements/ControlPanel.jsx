// The side panel of Harbor Assistant (ui/app.py `panel`): the temperature presets as buttons that
// show their temperatures, and the model server's health, redrawn by the app every few seconds.
// Everything shown is text from the app's props (numbers and fixed words): no HTML is injected.
// A preset is chosen with a window message (Chainlit's `on_window_message`), not an action: an
// action is the thread's first interaction in Chainlit, which would start and name the thread.
import { Button } from "@/components/ui/button";

function Row({ label, value }) {
  return (
    <div style={{ display: "flex", justifyContent: "space-between", padding: "2px 0" }}>
      <span style={{ opacity: 0.75 }}>{label}</span>
      <span id={"health-" + label.split(" ")[0].toLowerCase()} style={{ fontWeight: 600 }}>{value}</span>
    </div>
  );
}

export default function ControlPanel() {
  const health = props.health || {};
  const fmt = (v, unit) => (v === null || v === undefined ? "–" : `${v}${unit || ""}`);
  const tps = health.tps === null || health.tps === undefined ? "–" : `${Number(health.tps).toFixed(1)} tok/s`;
  return (
    <div id="control-panel" style={{ display: "flex", flexDirection: "column", gap: "14px", fontSize: "14px" }}>
      <section>
        <div style={{ fontWeight: 600, marginBottom: "6px" }}>How freely I write</div>
        <div style={{ display: "flex", flexDirection: "column", gap: "6px" }}>
          {(props.presets || []).map((p) => (
            <Button
              key={p.id}
              id={"preset-" + p.id}
              variant={p.id === props.current ? "default" : "outline"}
              aria-pressed={p.id === props.current}
              onClick={() => window.postMessage({ harbor: "preset", preset: p.id }, window.location.origin)}
              style={{ justifyContent: "space-between", width: "100%" }}
            >
              <span>{p.label}</span>
              <span style={{ fontSize: "12px", opacity: 0.85 }}>{p.temps}</span>
            </Button>
          ))}
        </div>
        <div style={{ fontSize: "12px", opacity: 0.7, marginTop: "4px" }}>
          Temperature: 0 always picks the likeliest word; higher values vary the wording. Facts
          and tool choices are never affected.
        </div>
      </section>
      <section id="health-panel">
        <div style={{ fontWeight: 600, marginBottom: "6px" }}>Model server</div>
        {health.error ? (
          <div role="status">{health.error}</div>
        ) : (
          <div>
            <Row label="Running requests" value={fmt(health.running)} />
            <Row label="Waiting requests" value={fmt(health.waiting)} />
            <Row label="KV cache" value={fmt(health.kv, "%")} />
            <Row label="Throughput" value={tps} />
            {health.warn ? (
              <div role="alert" id="kv-warning" style={{ marginTop: "6px", padding: "6px", borderRadius: "6px", border: "1px solid #d97706", color: "#d97706" }}>
                KV cache above {health.threshold}%: new requests may wait or be preempted.
              </div>
            ) : null}
          </div>
        )}
        <div id="health-updated" style={{ fontSize: "12px", opacity: 0.7, marginTop: "4px" }}>
          updated {health.at || "–"} · every {props.every} s
        </div>
      </section>
    </div>
  );
}
