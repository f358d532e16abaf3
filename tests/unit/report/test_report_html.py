"""``tinyarena report``: the page's figures equal the JSON's, it references nothing outside
itself, and a real headless Chromium renders it (non-blank, one rectangle per planned buffer,
the peak's tensors marked, no request leaving the page)."""

from __future__ import annotations

import http.server
import json
import re
import shutil
import struct
import subprocess
import threading
import zlib
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tinyarena.arena import allocate_model
from tinyarena.builder import ModelBuilder
from tinyarena.cli import main
from tinyarena.model import read_model
from tinyarena.report import explain_arena

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                  "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync"]


def _chain_model(path: Path) -> Path:
    rng = np.random.default_rng(1)
    b = ModelBuilder()
    prev = b.add_input("image", (1, 64), "float32")
    for i, out in enumerate((256, 32, 8)):
        w = b.add_constant(f"w{i}", rng.standard_normal((out, 64 if i == 0 else
                                                         (256, 32)[i - 1])).astype(np.float32))
        y = b.add_tensor(f"layer{i}", (1, out), "float32")
        b.add_operator("FULLY_CONNECTED", [prev, w, None], [y])
        prev = y
    b.mark_output(prev)
    path.write_bytes(b.build())
    return path


class _Figures(HTMLParser):
    """(target, key) -> text of every element carrying data-target and data-key."""

    def __init__(self) -> None:
        super().__init__()
        self.found: dict[tuple[str, str], str] = {}
        self._open: tuple[str, str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if a.get("data-key") and a.get("data-target"):
            self._open = (str(a["data-target"]), str(a["data-key"]))

    def handle_data(self, data: str) -> None:
        if self._open is not None:
            self.found[self._open] = data.strip()
            self._open = None


def _json_value(data: dict[str, Any], path: str) -> Any:
    """Walk 'tail_by_category.Persistent buffer data' style paths (the key after the first
    dot may contain dots only in the last component)."""
    head, _, rest = path.partition(".")
    if head in data and not rest:
        return data[head]
    if head in data and isinstance(data[head], dict):
        if rest in data[head]:
            return data[head][rest]
        return _json_value(data[head], rest)
    raise KeyError(path)


def _cli_json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict[str, Any]:
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def _report(capsys: pytest.CaptureFixture[str], model: Path, out: Path, *extra: str) -> str:
    assert main(["report", str(model), "-o", str(out), *extra]) == 0
    capsys.readouterr()
    return out.read_text(encoding="utf-8")


def _check_figures(capsys: pytest.CaptureFixture[str], page: str, model: Path,
                   targets: list[str]) -> None:
    parser = _Figures()
    parser.feed(page)
    assert {t for t, _ in parser.found} == set(targets)
    for target in targets:
        size = _cli_json(capsys, ["size", str(model), "--target", target, "--json"])
        plan = _cli_json(capsys, ["plan", str(model), "--target", target, "--json"])
        keys = [k for t, k in parser.found if t == target]
        assert {"size.head", "size.tail", "size.total", "size.min_arena", "size.temp_peak",
                "plan.lower_bound_bytes", "plan.bound.bytes", "plan.peak.step",
                "plan.peak.live_bytes"} <= set(keys)
        for key in keys:
            source, _, path = key.partition(".")
            expected = _json_value(size if source == "size" else plan, path)
            shown = parser.found[(target, key)]
            if isinstance(expected, int):
                assert int(shown.replace(",", "")) == expected, key
            else:
                assert shown == str(expected), key


def test_report_figures_equal_the_json(capsys: pytest.CaptureFixture[str],
                                       tmp_path: Path) -> None:
    model = _chain_model(tmp_path / "chain.tflite")
    page = _report(capsys, model, tmp_path / "r.html", "--target", "host-x64",
                   "--target", "arm32", "--time-budget", "0.2")
    _check_figures(capsys, page, model, ["host-x64", "arm32"])


def test_report_figures_equal_the_json_shared(capsys: pytest.CaptureFixture[str],
                                              tmp_path: Path, shared_models: Path) -> None:
    model = shared_models / "keyword_scrambled.tflite"
    page = _report(capsys, model, tmp_path / "r.html", "--target", "arm32", "--no-optimize")
    _check_figures(capsys, page, model, ["arm32"])


def test_report_is_self_contained(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    page = _report(capsys, _chain_model(tmp_path / "m.tflite"), tmp_path / "r.html",
                   "--time-budget", "0.2")
    assert not re.search(r"(?i)https?://|//[a-z0-9.-]+\.[a-z]{2,}/", page)
    assert not re.search(r"(?i)<script|<link|<iframe|<object|<embed|@import|url\(|\ssrc=|"
                         r"\shref=", page)
    assert ("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
            "style-src 'unsafe-inline'") in page


def test_plan_svg_one_rect_per_buffer(capsys: pytest.CaptureFixture[str],
                                      tmp_path: Path) -> None:
    model = _chain_model(tmp_path / "m.tflite")
    svg = tmp_path / "plan.svg"
    assert main(["plan", str(model), "--svg", str(svg)]) == 0
    capsys.readouterr()
    text = svg.read_text(encoding="utf-8")
    assert text.startswith("<svg xmlns=")
    layout = allocate_model(read_model(model))
    assert len(re.findall(r'<rect class="buf', text)) == len(layout.buffers)
    peak = re.findall(r'<rect class="buf peak"[^>]*data-name="([^"]*)"', text)
    assert sorted(peak) == ["image", "layer0"]


# -- a real browser ---------------------------------------------------------------------------


def _chromium() -> str:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        pytest.skip("Debian's chromium is not installed (apt-get install -y chromium); "
                    "the report is not checked in a real browser here")
    return exe


def _browse(tmp_path: Path, page: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    profile = tmp_path / f"profile-{len(list(tmp_path.glob('profile-*')))}"
    return subprocess.run([_chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args,
                           page.as_uri()], capture_output=True, timeout=120, check=False)


def _png_pixels(data: bytes) -> np.ndarray:
    """RGB(A) pixels of a PNG, decoded with Pillow when installed, else by hand (zlib and
    the five PNG row filters; 8-bit truecolour only, which is what Chromium writes)."""
    try:
        from io import BytesIO

        from PIL import Image

        return np.asarray(Image.open(BytesIO(data)).convert("RGB"))
    except ImportError:
        pass
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", b""
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + length]
        header = chunk if kind == b"IHDR" else header
        idat += chunk if kind == b"IDAT" else b""
        pos += 12 + length
    width, height, depth, colour = struct.unpack(">IIBB", header[:10])
    assert depth == 8 and colour in (2, 6)
    bpp = 3 if colour == 2 else 4
    raw = np.frombuffer(zlib.decompress(idat), np.uint8).reshape(height, 1 + width * bpp)
    out = np.zeros((height, width * bpp), np.int32)
    prev = np.zeros(width * bpp, np.int32)
    for y in range(height):
        f, row = raw[y, 0], raw[y, 1:].astype(np.int32)
        if f in (0, 2):
            cur = (row + (prev if f == 2 else 0)) % 256
        else:
            cur = row.copy()
            for x in range(len(cur)):
                a = cur[x - bpp] if x >= bpp else 0
                b, c = prev[x], prev[x - bpp] if x >= bpp else 0
                if f == 1:
                    pred = a
                elif f == 3:
                    pred = (a + b) // 2
                else:
                    p = a + b - c
                    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                cur[x] = (cur[x] + pred) % 256
        out[y], prev = cur, cur
    return out.reshape(height, width, bpp)[:, :, :3].astype(np.uint8)


@pytest.fixture(scope="module")
def report_page(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("report")
    model = _chain_model(tmp / "chain.tflite")
    assert main(["report", str(model), "-o", str(tmp / "report.html"), "--target", "host-x64",
                 "--target", "arm32", "--time-budget", "0.2"]) == 0
    return model, tmp / "report.html"


def test_chromium_screenshot_not_blank(report_page: tuple[Path, Path], tmp_path: Path) -> None:
    _, page = report_page
    shot = tmp_path / "shot.png"
    done = _browse(tmp_path, page, "--window-size=1200,900", f"--screenshot={shot}")
    assert shot.is_file(), done.stderr.decode(errors="replace")[-2000:]
    pixels = _png_pixels(shot.read_bytes())
    assert pixels.shape[0] >= 800 and pixels.shape[1] >= 1000
    colours = np.unique(pixels.reshape(-1, 3), axis=0)
    assert len(colours) > 20  # text, axes, coloured buffers
    not_white = np.any(pixels < 240, axis=2).mean()
    assert 0.02 < not_white < 0.9
    # the buffers' pastel fills are on screen (saturated, neither grey nor white)
    saturation = pixels.max(axis=2).astype(int) - pixels.min(axis=2)
    assert (saturation > 40).mean() > 0.005


def test_chromium_dom_has_one_rect_per_buffer_and_peak_marked(
        report_page: tuple[Path, Path], tmp_path: Path) -> None:
    model_path, page = report_page
    dom = _browse(tmp_path, page, "--dump-dom").stdout.decode()
    model = read_model(model_path)
    plans = re.findall(r'<svg class="plan".*?</svg>', dom, flags=re.S)
    layouts = {t: explain_arena(model, allocate_model(model, target=t))
               for t in ("host-x64", "arm32")}
    assert len(plans) == 2 + 2  # one per target, then optimize's before and after
    for svg, e in zip(plans, layouts.values()):
        rects = re.findall(r'<rect class="buf( peak)?"[^>]*data-position="(\d+)"', svg)
        assert sorted(int(p) for _, p in rects) == list(range(len(e.buffers)))
        marked = sorted(int(p) for peak, p in rects if peak)
        assert e.peak is not None and marked == sorted(e.peak.buffers)
        names = re.findall(r'<rect class="buf peak"[^>]*data-name="([^"]*)"', svg)
        assert sorted(names) == sorted(e.buffers[i].name for i in e.peak.buffers)
        assert svg.count("<title>") >= len(e.buffers)


def _counting_handler(hits: list[str]) -> type[http.server.BaseHTTPRequestHandler]:
    """A request handler class that appends each GET path to ``hits``."""

    class Counter(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            hits.append(self.path)
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    return Counter


def test_chromium_csp_blocks_requests(report_page: tuple[Path, Path], tmp_path: Path) -> None:
    """The page's own policy stops even a planted request (and the same page without the
    policy does make it, so the check can fail)."""
    _chromium()
    _, page = report_page
    hits: list[str] = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _counting_handler(hits))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        text = page.read_text(encoding="utf-8")
        planted = text.replace("<body>", f'<body><img src="{url}/planted.png" alt="">', 1)
        with_csp = tmp_path / "with_csp.html"
        with_csp.write_text(planted, encoding="utf-8")
        without = tmp_path / "without_csp.html"
        without.write_text(re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "",
                                  planted), encoding="utf-8")
        _browse(tmp_path, with_csp, "--dump-dom")
        assert hits == []
        _browse(tmp_path, without, "--dump-dom")
        assert hits == ["/planted.png"]
    finally:
        server.shutdown()
