// Maps (templates/dashboard/_map_canvas.html): Leaflet draws the points a page lists.
// - Each point is an <li data-lat data-lon ...> of the list named by data-points; its text (the server's), less
//   its .map-coords, is the marker's label. A point with no coordinates is listed, not drawn.
// - Tiles from data-tile-url, over a plain grid and a scale: all there is when tiles do not load (the page
//   then unhides its [data-no-tiles] note).
// - data-pick: a tap (or the form's "use this device's location") fills that form's latitude and longitude.
(function () {
  "use strict";

  var DIGITS = 6;  // about 0.1 m: finer than any GPS or tap

  function markerClass(li) {
    return "map-mark map-mark-" + (li.getAttribute("data-mark") || "point") +
      " map-status-" + (li.getAttribute("data-status") || "none");
  }

  function pointsOf(element) {
    var list = document.getElementById(element.getAttribute("data-points"));
    return list ? Array.prototype.slice.call(list.querySelectorAll("li[data-lat][data-lon]")) : [];
  }

  // A plain grid, one square per tile: what is left to read distances by without tiles.
  function grid() {
    var layer = L.gridLayer({ maxZoom: 22 });
    layer.createTile = function () {
      var tile = document.createElement("div");
      tile.className = "map-grid-tile";
      return tile;
    };
    return layer;
  }

  function noTiles(element) {
    var section = element.parentNode;
    var note = section && section.querySelector("[data-no-tiles]");
    if (note) note.hidden = false;
    element.setAttribute("data-tiles", "none");
  }

  function addTiles(map, element) {
    var url = element.getAttribute("data-tile-url");
    if (!url) { noTiles(element); return; }
    var loaded = false;
    var layer = L.tileLayer(url, { maxZoom: 19, attribution: element.getAttribute("data-tile-attribution") || "" });
    layer.on("tileload", function () {
      loaded = true;
      element.setAttribute("data-tiles", "loaded");
    });
    layer.on("tileerror", function () { if (!loaded) noTiles(element); });
    layer.addTo(map);
  }

  function picker(map, element) {
    var form = document.getElementById(element.getAttribute("data-pick"));
    if (!form) return;
    var lat = form.querySelector("input[name$='-latitude']");
    var lon = form.querySelector("input[name$='-longitude']");
    var chosen = null;
    function put(latitude, longitude) {
      lat.value = latitude.toFixed(DIGITS);
      lon.value = longitude.toFixed(DIGITS);
      var at = [latitude, longitude];
      if (chosen) chosen.setLatLng(at);
      else chosen = L.circleMarker(at, { className: "map-mark map-mark-chosen", radius: 10 }).addTo(map);
      element.setAttribute("data-picked", lat.value + "," + lon.value);
    }
    map.on("click", function (event) { put(event.latlng.lat, event.latlng.lng); });
    var button = form.querySelector("[data-use-location]");
    var failed = form.querySelector("[data-location-error]");
    if (!button) return;
    if (!navigator.geolocation) { button.hidden = true; return; }
    button.addEventListener("click", function () {
      if (failed) failed.hidden = true;
      navigator.geolocation.getCurrentPosition(function (position) {
        put(position.coords.latitude, position.coords.longitude);
        map.panTo([position.coords.latitude, position.coords.longitude]);
      }, function () { if (failed) failed.hidden = false; }, { enableHighAccuracy: true, timeout: 15000 });
    });
  }

  function build(element) {
    if (!window.L) return false;  // Leaflet not run yet (its script and this one load in either order after a swap)
    var center = element.getAttribute("data-center").split(",").map(Number);
    var map = L.map(element, { center: center, zoom: Number(element.getAttribute("data-zoom")) || 15 });
    map.attributionControl.setPrefix("Leaflet");
    grid().addTo(map);
    addTiles(map, element);
    L.control.scale({ metric: true, imperial: true }).addTo(map);
    var shown = element.hasAttribute("data-labels-shown");
    var bounds = [];
    pointsOf(element).forEach(function (li) {
      var at = [Number(li.getAttribute("data-lat")), Number(li.getAttribute("data-lon"))];
      var marker = L.circleMarker(at, { className: markerClass(li), radius: 9 }).addTo(map);
      var words = li.cloneNode(true);  // the item's words, less its coordinates (the marker says where)
      words.querySelectorAll(".map-coords").forEach(function (el) { el.remove(); });
      var label = words.textContent.replace(/\s+/g, " ").trim();
      // A text node, not a string: Leaflet puts a string in as HTML, and the label is what someone typed.
      if (shown) marker.bindTooltip(document.createTextNode(label), { permanent: true, direction: "right", className: "map-label" });
      else marker.bindPopup(li.innerHTML);
      bounds.push(at);
    });
    if (bounds.length > 1) map.fitBounds(bounds, { padding: [30, 30], maxZoom: Number(element.getAttribute("data-zoom")) || 18 });
    // A popup's links are the list's: hx-boost them too (htmx processed the page before the popup existed).
    map.on("popupopen", function (event) { if (window.htmx) window.htmx.process(event.popup.getElement()); });
    picker(map, element);
    element.mapObject = map;
  }

  window.setUpEach("[data-map]", build);
})();
