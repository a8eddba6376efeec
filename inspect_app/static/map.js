// Maps (templates/dashboard/_map_canvas.html): Leaflet draws the points a page lists.
// - Each point is an <li data-lat data-lon ...> of the list named by data-points; its text (the server's), less
//   its .map-coords, is the marker's label. A point with no coordinates is listed, not drawn.
// - Tiles from data-tile-url, over a plain grid and a scale: all there is when tiles do not load (the page
//   then unhides its [data-no-tiles] note).
// - data-pick: a tap (or the form's "use this device's location") fills that form's latitude and longitude.
const DIGITS = 6;  // about 0.1 m: finer than any GPS or tap

const markerClass = (li) => `map-mark map-mark-${li.dataset.mark || "point"} map-status-${li.dataset.status || "none"}`;

function noTiles(element) {
  const note = element.parentNode?.querySelector("[data-no-tiles]");
  if (note) note.hidden = false;
  element.dataset.tiles = "none";
}

function addTiles(map, element) {
  const url = element.dataset.tileUrl;
  if (!url) return noTiles(element);
  let loaded = false;
  const layer = L.tileLayer(url, { maxZoom: 19, attribution: element.dataset.tileAttribution || "" });
  layer.on("tileload", () => { loaded = true; element.dataset.tiles = "loaded"; });
  layer.on("tileerror", () => { if (!loaded) noTiles(element); });
  layer.addTo(map);
}

function picker(map, element) {
  const form = document.getElementById(element.dataset.pick);
  if (!form) return;
  const lat = form.querySelector("input[name$='-latitude']"), lon = form.querySelector("input[name$='-longitude']");
  let chosen = null;
  function put(latitude, longitude) {
    lat.value = latitude.toFixed(DIGITS);
    lon.value = longitude.toFixed(DIGITS);
    if (chosen) chosen.setLatLng([latitude, longitude]);
    else chosen = L.circleMarker([latitude, longitude], { className: "map-mark map-mark-chosen", radius: 10 }).addTo(map);
    element.dataset.picked = `${lat.value},${lon.value}`;
  }
  map.on("click", (event) => put(event.latlng.lat, event.latlng.lng));
  const button = form.querySelector("[data-use-location]"), failed = form.querySelector("[data-location-error]");
  if (!navigator.geolocation) { button.hidden = true; return; }
  button.addEventListener("click", () => {
    failed.hidden = true;
    navigator.geolocation.getCurrentPosition(({ coords }) => {
      put(coords.latitude, coords.longitude);
      map.panTo([coords.latitude, coords.longitude]);
    }, () => { failed.hidden = false; }, { enableHighAccuracy: true, timeout: 15000 });
  });
}

function build(element) {
  if (!window.L) return false;  // Leaflet not run yet (its script and this one load in either order after a swap)
  const zoom = Number(element.dataset.zoom);
  const map = L.map(element, { center: element.dataset.center.split(",").map(Number), zoom: zoom || 15 });
  map.attributionControl.setPrefix("Leaflet");
  const grid = L.gridLayer({ maxZoom: 22 });  // one square per tile: what is left to read distances by without tiles
  grid.createTile = () => Object.assign(document.createElement("div"), { className: "map-grid-tile" });
  grid.addTo(map);
  addTiles(map, element);
  L.control.scale({ metric: true, imperial: true }).addTo(map);
  const shown = element.hasAttribute("data-labels-shown"), bounds = [];
  const points = document.getElementById(element.dataset.points)?.querySelectorAll("li[data-lat][data-lon]") || [];
  points.forEach((li) => {
    const at = [Number(li.dataset.lat), Number(li.dataset.lon)];
    const marker = L.circleMarker(at, { className: markerClass(li), radius: 9 }).addTo(map);
    const words = li.cloneNode(true);  // the item's words, less its coordinates (the marker says where)
    words.querySelectorAll(".map-coords").forEach((el) => el.remove());
    const label = words.textContent.replace(/\s+/g, " ").trim();
    // A text node, not a string: Leaflet puts a string in as HTML, and the label is what someone typed.
    if (shown) marker.bindTooltip(document.createTextNode(label), { permanent: true, direction: "right", className: "map-label" });
    else marker.bindPopup(li.innerHTML);
    bounds.push(at);
  });
  if (bounds.length > 1) map.fitBounds(bounds, { padding: [30, 30], maxZoom: zoom || 18 });
  // A popup's links are the list's: hx-boost them too (htmx processed the page before the popup existed).
  map.on("popupopen", (event) => window.htmx?.process(event.popup.getElement()));
  picker(map, element);
  element.mapObject = map;
}

window.setUpEach("[data-map]", build);
