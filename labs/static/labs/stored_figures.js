/**
 * Stored figures on staff pages (a student's runs in a course): each `.figure` div inside a
 * `details.figures` box is followed by its figure's JSON; drawn with Plotly when the box opens.
 * A static file, not an inline script, so the Content-Security-Policy allows no inline script at all.
 */
document.querySelectorAll("details.figures").forEach((box) => box.addEventListener("toggle", () => {
  box.querySelectorAll(".figure").forEach((div) => {
    if (div.dataset.rendered || !window.Plotly) return;
    const fig = JSON.parse(div.nextElementSibling.textContent);
    const spec = fig.figure || fig;
    window.Plotly.react(div, spec.data || [], spec.layout || {}, {displaylogo: false});
    div.dataset.rendered = "1";
  });
}));
