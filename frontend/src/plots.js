/**
 * Plotly figures, drawn with `Plotly.react` from the JSON the server built
 * with plotly.py. plotly.js is a separate file (plotly.min.js beside app.js)
 * loaded on first use, unless the page already loaded it.
 */

// Captured while app.js itself is executing: the only moment currentScript is set
// (it is null for type="module" scripts; the <script src=".../app.js"> lookup covers those).
const currentSrc = typeof document !== "undefined" && document.currentScript ? document.currentScript.src : "";

let loading = null;

function bundleSrc() {
  if (currentSrc) return currentSrc;
  const tag = document.querySelector('script[src$="/app.js"], script[src*="/app.js?"]');
  return tag ? tag.src : "";
}

/** The URL plotly.min.js is loaded from: an explicit one, else next to app.js. */
export function plotlyUrl(explicit) {
  if (explicit) return explicit;
  const src = bundleSrc();
  return src ? new URL("plotly.min.js", src).href : "plotly.min.js";
}

/** Resolves to window.Plotly, loading it once if needed. */
export function loadPlotly(explicitUrl) {
  if (window.Plotly) return Promise.resolve(window.Plotly);
  if (!loading) {
    loading = new Promise((resolve, reject) => {
      const script = document.createElement("script");
      script.src = plotlyUrl(explicitUrl);
      script.async = true;
      script.onload = () => (window.Plotly ? resolve(window.Plotly) : reject(new Error("plotly.js loaded without Plotly")));
      script.onerror = () => {
        loading = null;
        reject(new Error(`could not load ${script.src}`));
      };
      document.head.appendChild(script);
    });
  }
  return loading;
}

/** The {data, layout} pair of a figure event or a result's figure entry. */
export function figureSpec(entry) {
  const fig = entry && entry.figure && typeof entry.figure === "object" ? entry.figure : entry;
  return { data: (fig && fig.data) || [], layout: (fig && fig.layout) || {} };
}

/** One div per figure title inside a container; re-rendering a title replaces its plot. */
export class Figures {
  constructor(container, plotlySrc) {
    this.container = container;
    this.plotlySrc = plotlySrc;
    this.generation = 0;
  }

  findSlot(title) {
    for (const child of this.container.children) {
      if (child.dataset.title === title) return child;
    }
    return null;
  }

  slot(title) {
    let div = this.findSlot(title);
    if (!div) {
      div = document.createElement("div");
      div.className = "figure";
      div.dataset.title = title;
      this.container.appendChild(div);
    }
    return div;
  }

  async show(title, entry) {
    const generation = this.generation;
    const div = this.slot(title);
    const { data, layout } = figureSpec(entry);
    try {
      const Plotly = await loadPlotly(this.plotlySrc);
      if (generation !== this.generation || !div.isConnected) return;
      delete div.dataset.error;
      await Plotly.react(div, data, { autosize: true, ...layout }, { responsive: true, displaylogo: false });
      div.dataset.rendered = "true";
    } catch (err) {
      if (generation !== this.generation) return;
      div.dataset.error = "true";
      div.textContent = `Plot “${title}” could not be drawn: ${err.message}`;
    }
  }

  clear() {
    this.generation += 1;
    for (const child of [...this.container.children]) {
      if (window.Plotly && child.dataset.rendered) window.Plotly.purge(child);
    }
    this.container.replaceChildren();
  }
}
