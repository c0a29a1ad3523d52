/* A lesson page's figures: each {name, slot, figure} from #lesson-figures drawn into its <figure> slot. */
(function () {
  "use strict";
  var data = document.getElementById("lesson-figures");
  if (!data || !window.Plotly) return;
  JSON.parse(data.textContent).forEach(function (entry) {
    var slot = document.getElementById(entry.slot);
    if (!slot || !entry.figure) return;
    var fig = entry.figure;
    window.Plotly.newPlot(slot, fig.data || [], fig.layout || {}, { responsive: true, displaylogo: false });
  });
})();
