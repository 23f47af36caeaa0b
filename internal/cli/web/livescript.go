package web

// liveScript follows /api/live/events and redraws the live view. It builds every element with
// textContent, never innerHTML: scenario names are untrusted.
const liveScript = `(function () {
  'use strict';
  var chart = null;
  function fmt(v) { return v === undefined || v === null ? '-' : (v >= 100 ? v.toFixed(1) : v.toPrecision(3)); }
  function set(id, text) { var e = document.getElementById(id); if (e) { e.textContent = text; } }
  function draw(s) {
    set('live-run', s.run_id || 'no run seen yet');
    set('live-status', s.running ? 'running' : 'idle');
    set('live-count', s.done + (s.total ? ' / ' + s.total : '') + ' scenarios');
    set('live-ok', s.ok); set('live-failed', s.failed); set('live-skipped', s.skipped);
    set('live-current', s.current || '-');
    var p = document.getElementById('live-progress');
    if (p) { p.max = s.total || Math.max(s.done, 1); p.value = s.done; }
    var body = document.getElementById('live-rows');
    if (body) {
      while (body.firstChild) { body.removeChild(body.firstChild); }
      (s.scenarios || []).slice().reverse().forEach(function (sc) {
        var tr = document.createElement('tr');
        [sc.id, sc.status, sc.metric || '-', fmt(sc.p50), fmt(sc.p95), fmt(sc.throughput), sc.note || ''].forEach(function (t) {
          var td = document.createElement('td'); td.textContent = t; tr.appendChild(td);
        });
        body.appendChild(tr);
      });
    }
    var div = document.getElementById('live-chart');
    if (div && typeof echarts !== 'undefined') {
      if (!chart) { chart = echarts.init(div); div.setAttribute('data-rendered', 'ok'); }
      var done = (s.scenarios || []).filter(function (sc) { return sc.p50 !== undefined; });
      var o = window.inferbench.option({
        title: 'p50 and p95 of finished scenarios', kind: 'bar', y_name: 'ms',
        categories: done.map(function (sc) { return sc.id; }),
        series: [{ name: 'p50', data: done.map(function (sc) { return sc.p50; }) }, { name: 'p95', data: done.map(function (sc) { return sc.p95; }) }]
      });
      // The legend sits under the title, the unit above the value axis, and the grid holds the
      // scenario labels, of long names their last 14 characters (where variants differ; the
      // tooltip and the table below have the names whole), so no text covers another however
      // many scenarios and however long their names (web/browser/check.mjs checks it).
      o.legend = { top: 34, left: 'center' };
      o.grid = { left: 64, right: 24, top: 76, bottom: 8, containLabel: true };
      o.yAxis[0].nameLocation = 'end'; o.yAxis[0].nameGap = 12;
      o.xAxis.axisLabel = { rotate: done.length > 6 ? 30 : 0, hideOverlap: true, width: 130, overflow: 'truncate',
        formatter: function (v) { return v.length > 15 ? '\u2026' + v.slice(-14) : v; } };
      chart.setOption(o, true);
    }
  }
  if (window.EventSource) {
    var es = new EventSource('/api/live/events');
    es.addEventListener('state', function (e) { draw(JSON.parse(e.data)); });
  }
  fetch('/api/live').then(function (r) { return r.json(); }).then(draw).catch(function () {});
})();`
