// inferbench page script: draws the charts described in #ib-charts with ECharts, lazily as they
// scroll into view, and sorts tables by a clicked column. Every label reaches ECharts as plain
// text and tooltips render as rich text on the canvas, so no name is ever parsed as HTML.
(function () {
  'use strict';
  var holder = document.getElementById('ib-charts');
  var specs = holder ? JSON.parse(holder.textContent || '[]') || [] : [];
  var byId = {};
  specs.forEach(function (c) { byId[c.id] = c; });
  var instances = [];

  function axisName(name, loc) {
    return { name: name || '', nameLocation: 'middle', nameGap: loc, nameTextStyle: { color: '#555' } };
  }

  function errorSeries(s, color) {
    return {
      name: s.name, type: 'custom', data: s.err, encode: { x: 0, y: [1, 2] }, z: 10, silent: true,
      renderItem: function (params, api) {
        var x = api.value(0), lo = api.coord([x, api.value(1)]), hi = api.coord([x, api.value(2)]);
        var style = { stroke: api.visual('color'), lineWidth: 1 };
        return { type: 'group', children: [
          { type: 'line', shape: { x1: lo[0], y1: lo[1], x2: hi[0], y2: hi[1] }, style: style },
          { type: 'line', shape: { x1: lo[0] - 4, y1: lo[1], x2: lo[0] + 4, y2: lo[1] }, style: style },
          { type: 'line', shape: { x1: hi[0] - 4, y1: hi[1], x2: hi[0] + 4, y2: hi[1] }, style: style }
        ] };
      }
    };
  }

  function option(c) {
    var cats = c.categories && c.categories.length ? c.categories : null;
    var x;
    if (cats) {
      x = Object.assign({ type: 'category', data: cats, axisLabel: { rotate: cats.length > 6 ? 30 : 0, hideOverlap: true } }, axisName(c.x_name, cats.length > 6 ? 48 : 28));
    } else {
      x = Object.assign({ type: c.x_time ? 'time' : 'value', scale: true }, axisName(c.x_name, 28));
    }
    var y = [Object.assign({ type: c.y_log ? 'log' : 'value', scale: c.kind !== 'bar' }, axisName(c.y_name, 52))];
    if (c.y2_name) { y.push(Object.assign({ type: 'value', scale: true, splitLine: { show: false } }, axisName(c.y2_name, 52))); }
    var series = [];
    var selected = {};
    (c.series || []).forEach(function (s, i) {
      var type = s.type || (c.kind === 'boxplot' ? 'boxplot' : c.kind === 'bar' ? 'bar' : 'line');
      var one = { name: s.name, type: type, data: s.data, yAxisIndex: s.y2 ? 1 : 0, animation: false };
      if (s.color) { one.itemStyle = { color: s.color }; }
      if (type === 'line') {
        one.lineStyle = { type: s.dashed ? 'dashed' : 'solid', width: 1.5 };
        one.symbolSize = 5; one.showSymbol = (s.data || []).length <= 60; one.connectNulls = true;
        if (s.step) { one.step = 'middle'; one.showSymbol = false; }
      }
      var marks = s.marks || (i === 0 ? c.marks : null);
      if (marks && marks.length) {
        one.markLine = { symbol: 'none', silent: true, lineStyle: { type: 'dashed', width: 2, color: '#d62728' },
          label: { position: 'insideEndTop', color: '#d62728' },
          data: marks.map(function (m) { return { xAxis: m.x, label: { formatter: function () { return m.label; } } }; }) };
      }
      series.push(one);
      if (s.err && s.err.length) { series.push(errorSeries(s)); }
      if (c.show && i >= c.show) { selected[s.name] = false; }
    });
    return {
      animation: false,
      title: { text: c.title, left: 'center', textStyle: { fontSize: 13, fontWeight: 'normal' } },
      tooltip: { trigger: c.kind === 'boxplot' ? 'item' : 'axis', renderMode: 'richText', confine: true },
      legend: { type: 'scroll', bottom: 0, selected: selected },
      grid: { left: 70, right: c.y2_name ? 70 : 24, top: 36, bottom: cats && cats.length > 6 ? 96 : 72 },
      xAxis: x, yAxis: y, series: series
    };
  }

  function render(div) {
    if (div.getAttribute('data-rendered')) { return; }
    var spec = byId[div.getAttribute('data-chart')];
    if (!spec) { div.setAttribute('data-rendered', 'missing'); return; }
    if (typeof echarts === 'undefined') { div.textContent = 'charts unavailable: the chart library did not load'; div.setAttribute('data-rendered', 'error'); return; }
    var chart = echarts.init(div, null, { renderer: 'canvas' });
    chart.setOption(option(spec));
    instances.push(chart);
    div.setAttribute('data-rendered', 'ok');
  }

  function charts() { return Array.prototype.slice.call(document.querySelectorAll('[data-chart]')); }

  function setup() {
    var divs = charts();
    if ('IntersectionObserver' in window) {
      var io = new IntersectionObserver(function (entries) {
        entries.forEach(function (e) { if (e.isIntersecting) { render(e.target); io.unobserve(e.target); } });
      }, { rootMargin: '400px' });
      divs.forEach(function (d) { io.observe(d); });
    } else {
      divs.forEach(render);
    }
    var t;
    window.addEventListener('resize', function () {
      clearTimeout(t);
      t = setTimeout(function () { instances.forEach(function (c) { c.resize(); }); }, 100);
    });
    document.querySelectorAll('table.sortable th').forEach(function (th, col) {
      th.addEventListener('click', function () { sortBy(th); });
    });
  }

  function cellValue(td) {
    var s = (td && td.textContent || '').trim();
    var f = parseFloat(s.replace('%', ''));
    return isNaN(f) ? s.toLowerCase() : f;
  }

  function sortBy(th) {
    var table = th.closest('table'), body = table.tBodies[0];
    var col = Array.prototype.indexOf.call(th.parentNode.children, th);
    var dir = th.getAttribute('data-dir') === 'asc' ? -1 : 1;
    th.parentNode.querySelectorAll('th').forEach(function (h) { h.removeAttribute('data-dir'); });
    th.setAttribute('data-dir', dir === 1 ? 'asc' : 'desc');
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = cellValue(a.cells[col]), y = cellValue(b.cells[col]);
      if (typeof x !== typeof y) { x = String(x); y = String(y); }
      return x < y ? -dir : x > y ? dir : 0;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }

  // window.inferbench lets tests and the dashboard draw every chart now and count them.
  window.inferbench = {
    renderAll: function () { charts().forEach(render); return charts().length; },
    status: function () {
      var s = { total: 0, ok: 0, other: 0 };
      charts().forEach(function (d) { s.total++; if (d.getAttribute('data-rendered') === 'ok') { s.ok++; } else if (d.getAttribute('data-rendered')) { s.other++; } });
      return s;
    },
    option: option
  };
  if (document.readyState === 'loading') { document.addEventListener('DOMContentLoaded', setup); } else { setup(); }
})();
