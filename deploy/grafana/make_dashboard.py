#!/usr/bin/env python3
"""Writes deploy/grafana/dashboards/spgemmd.json, the spgemmd Grafana dashboard.

The JSON is committed (Grafana provisions it as is); edit this file and rerun
  python3 deploy/grafana/make_dashboard.py
to change it. tests/deploy/check_deploy.py checks that every metric the
queries name is one spgemmd exports.
"""
import json
import os

DS = {"type": "prometheus", "uid": "${datasource}"}
SEL = 'instance=~"$instance"'
RATE = "$__rate_interval"

panels = []
_next_id = [1]


def _id():
    i = _next_id[0]
    _next_id[0] += 1
    return i


def target(expr, legend, ref):
    return {"datasource": DS, "expr": expr, "legendFormat": legend, "refId": ref, "range": True}


def row(title, y):
    panels.append({"id": _id(), "type": "row", "title": title, "collapsed": False,
                   "gridPos": {"h": 1, "w": 24, "x": 0, "y": y}, "panels": []})


def timeseries(title, targets, unit, x, y, w=12, h=8, description="", stack=False):
    panels.append({
        "id": _id(), "type": "timeseries", "title": title, "description": description,
        "datasource": DS,
        "gridPos": {"h": h, "w": w, "x": x, "y": y},
        "fieldConfig": {"defaults": {"unit": unit, "custom": {
            "drawStyle": "line", "lineWidth": 1, "fillOpacity": 10, "showPoints": "never",
            "stacking": {"mode": "normal" if stack else "none", "group": "A"}}},
            "overrides": []},
        "options": {"legend": {"displayMode": "table", "placement": "bottom", "calcs": ["lastNotNull", "max"]},
                    "tooltip": {"mode": "multi", "sort": "desc"}},
        "targets": [target(e, l, chr(ord("A") + i)) for i, (e, l) in enumerate(targets)],
    })


def stat(title, expr, unit, x, y, w=4, h=4, description=""):
    panels.append({
        "id": _id(), "type": "stat", "title": title, "description": description,
        "datasource": DS,
        "gridPos": {"h": h, "w": w, "x": x, "y": y},
        "fieldConfig": {"defaults": {"unit": unit, "decimals": 2}, "overrides": []},
        "options": {"reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
                    "colorMode": "value", "graphMode": "area", "textMode": "auto"},
        "targets": [target(expr, title, "A")],
    })


# ---- overview ---------------------------------------------------------------
row("Overview", 0)
stat("Jobs / s", f'sum(rate(spgemmd_jobs_total{{{SEL}}}[{RATE}]))', "reqps", 0, 1)
stat("Errors / s", f'sum(rate(spgemmd_jobs_total{{{SEL},outcome!="ok"}}[{RATE}]))', "reqps", 4, 1,
     description="Calls that ended with a status other than OK.")
stat("GFLOPS (delivered)", f'sum(rate(spgemmd_flops_total{{{SEL}}}[{RATE}])) / 1e9', "none", 8, 1,
     description="Floating-point operations (2 x scalar products) per second of wall time, all devices.")
stat("Queue depth", f'sum(spgemmd_queue_depth{{{SEL}}})', "none", 12, 1,
     description="Jobs waiting for admission (memory-estimate scheduler).")
stat("Matrices stored", f'sum(spgemmd_matrices{{{SEL}}})', "none", 16, 1)
stat("p95 compute", f'histogram_quantile(0.95, sum by (le) (rate(spgemmd_phase_seconds_bucket{{{SEL},phase="compute"}}[{RATE}])))',
     "s", 20, 1)

# ---- jobs and latency -------------------------------------------------------
row("Jobs and latency", 5)
timeseries("Jobs by kind and outcome",
           [(f'sum by (kind, outcome) (rate(spgemmd_jobs_total{{{SEL},kind=~"$kind"}}[{RATE}]))', "{{kind}} {{outcome}}")],
           "reqps", 0, 6, description="Completed calls per second (upload, multiply, galerkin, transpose, download).")
timeseries("Running jobs and queue",
           [(f'sum by (device) (spgemmd_jobs_running{{{SEL}}})', "running {{device}}"),
            (f'sum(spgemmd_queue_depth{{{SEL}}})', "queued")],
           "none", 12, 6, description="Jobs running per device, and jobs waiting for admission.")
timeseries("Latency p50 / p95 / p99 by phase",
           [(f'histogram_quantile({q}, sum by (le, phase) (rate(spgemmd_phase_seconds_bucket{{{SEL},kind=~"$kind"}}[{RATE}])))',
             f"p{int(q * 100)} {{{{phase}}}}") for q in (0.5, 0.95, 0.99)],
           "s", 0, 14, w=24, description="queue: waiting for admission; compute: the engine; stream: sending the result.")
timeseries("Mean latency by kind and phase",
           [(f'sum by (kind, phase) (rate(spgemmd_phase_seconds_sum{{{SEL},kind=~"$kind"}}[{RATE}])) / '
             f'sum by (kind, phase) (rate(spgemmd_phase_seconds_count{{{SEL},kind=~"$kind"}}[{RATE}]))',
             "{{kind}} {{phase}}")],
           "s", 0, 22, description="Mean seconds per phase: queue, compute, stream.")
timeseries("GFLOPS",
           [(f'sum by (device) (rate(spgemmd_flops_total{{{SEL}}}[{RATE}])) / 1e9', "delivered {{device}}"),
            (f'sum(rate(spgemmd_flops_total{{{SEL}}}[{RATE}])) / '
             f'sum(rate(spgemmd_phase_seconds_sum{{{SEL},phase="compute"}}[{RATE}])) / 1e9', "per compute second")],
           "none", 12, 22, description="Delivered: flops per second of wall time. Per compute second: as the CLI's --stats reports it (flops / compute time).")
timeseries("Bytes in / out",
           [(f'sum(rate(spgemmd_bytes_in_total{{{SEL}}}[{RATE}]))', "in (uploads)"),
            (f'sum(rate(spgemmd_bytes_out_total{{{SEL}}}[{RATE}]))', "out (results, downloads)")],
           "Bps", 0, 30, w=24)

# ---- cache ------------------------------------------------------------------
row("Matrix cache", 38)
timeseries("Cache bytes",
           [(f'sum by (device) (spgemmd_cache_bytes{{{SEL}}})', "resident {{device}}"),
            (f'sum(spgemmd_cache_host_bytes{{{SEL}}})', "spilled to host")],
           "bytes", 0, 39, description="Matrices resident per device, and spilled to host memory.")
timeseries("Cache hit ratio",
           [(f'avg by (device) (spgemmd_cache_hit_ratio{{{SEL}}})', "{{device}}")],
           "percentunit", 12, 39, description="Uses of a matrix found resident on the device / all uses.")
timeseries("Matrices stored",
           [(f'sum by (instance) (spgemmd_matrices{{{SEL}}})', "{{instance}}")],
           "none", 0, 47, w=24, h=6)

# ---- device memory ----------------------------------------------------------
row("Device memory", 53)
timeseries("Budget, cache and reservations",
           [(f'sum by (device) (spgemmd_device_budget_bytes{{{SEL}}})', "budget {{device}}"),
            (f'sum by (device) (spgemmd_cache_bytes{{{SEL}}})', "cache {{device}}"),
            (f'sum by (device) (spgemmd_device_reserved_bytes{{{SEL}}})', "reserved {{device}}"),
            (f'max by (device) (spgemmd_device_used_peak_bytes{{{SEL}}})', "peak used {{device}}")],
           "bytes", 0, 54, description="The scheduler's view: cache + reserved never exceeds the budget.")
timeseries("Device memory (allocator and driver)",
           [(f'sum by (device) (spgemmd_device_memory_total_bytes{{{SEL}}})', "total {{device}}"),
            (f'sum by (device) (spgemmd_device_memory_free_bytes{{{SEL}}})', "free {{device}}"),
            (f'sum by (device) (spgemmd_device_memory_in_use_bytes{{{SEL}}})', "in use {{device}}"),
            (f'max by (device) (spgemmd_device_memory_peak_bytes{{{SEL}}})', "peak {{device}}")],
           "bytes", 12, 54)

dashboard = {
    "uid": "spgemmd",
    "title": "spgemmd",
    "description": "spgemmd: jobs, latency, GFLOPS, queue, matrix cache and device memory.",
    "tags": ["spgemmd", "gpu"],
    "timezone": "browser",
    "editable": True,
    "graphTooltip": 1,
    "refresh": "30s",
    "schemaVersion": 39,
    "version": 1,
    "time": {"from": "now-1h", "to": "now"},
    "templating": {"list": [
        {"name": "datasource", "type": "datasource", "query": "prometheus", "label": "Data source",
         "current": {"text": "Prometheus", "value": "prometheus"}, "hide": 0, "refresh": 1},
        {"name": "instance", "type": "query", "label": "Instance", "datasource": DS,
         "query": {"query": "label_values(spgemmd_queue_depth, instance)", "refId": "instance"},
         "definition": "label_values(spgemmd_queue_depth, instance)",
         "includeAll": True, "multi": True, "allValue": ".*",
         "current": {"text": "All", "value": "$__all"}, "refresh": 2, "sort": 1, "hide": 0},
        {"name": "kind", "type": "query", "label": "Kind", "datasource": DS,
         "query": {"query": "label_values(spgemmd_jobs_total, kind)", "refId": "kind"},
         "definition": "label_values(spgemmd_jobs_total, kind)",
         "includeAll": True, "multi": True, "allValue": ".*",
         "current": {"text": "All", "value": "$__all"}, "refresh": 2, "sort": 1, "hide": 0},
    ]},
    "annotations": {"list": []},
    "panels": panels,
}

if __name__ == "__main__":
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dashboards", "spgemmd.json")
    with open(out, "w") as f:
        json.dump(dashboard, f, indent=2)
        f.write("\n")
    print(out)
