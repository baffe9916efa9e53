"""Images for the model (a prompt's, a read file's): checked to be PNG, JPEG, GIF or WebP and
brought within the API's limits (5 MB of base64, 8000 px a side), downscaled with Pillow when
over. The API itself scales anything past about 1568 px on the long edge down, so that is the
size a too-large image is brought to."""

from __future__ import annotations

import base64
import binascii
import io
import zlib
from dataclasses import dataclass

from PIL import Image, ImageOps, UnidentifiedImageError

FORMATS = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WEBP": "image/webp"}
IMAGE_TYPES = frozenset(FORMATS.values())
SUFFIXES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg",
            ".gif": "image/gif", ".webp": "image/webp"}  # fmt: skip
MAX_IMAGE_BASE64 = 5 * 1024 * 1024
MAX_SIDE = 8000
LONG_EDGE = 1568
# Never decode more than this: a small file can claim a huge canvas (a decompression bomb).
MAX_PIXELS = 50_000_000
# A file larger than this is not read at all.
MAX_FILE_BYTES = 50 * 1024 * 1024


class ImageError(ValueError):
    """Not an image the model can take; the message says why."""


@dataclass(frozen=True)
class PreparedImage:
    media_type: str
    data: str  # base64
    width: int
    height: int
    # The original size when it was downscaled.
    scaled_from: tuple[int, int] | None = None


PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def lenient_png(raw: bytes) -> bytes:
    """A PNG without its ancillary chunks whose CRC is wrong (libpng, and so browsers, skip them
    with a warning; Pillow refuses the file), else the bytes as they are."""
    if not raw.startswith(PNG_SIGNATURE):
        return raw
    out, pos = [raw[:8]], 8
    while pos + 12 <= len(raw):
        length = int.from_bytes(raw[pos : pos + 4], "big")
        end = pos + 12 + length
        kind = raw[pos + 4 : pos + 8]
        crc = int.from_bytes(raw[end - 4 : end], "big")
        if not (kind[:1].islower() and zlib.crc32(raw[pos + 4 : end - 4]) != crc):
            out.append(raw[pos:end])
        pos = end
    out.append(raw[pos:])
    return b"".join(out)


def is_image_path(name: str) -> bool:
    dot = name.rfind(".")
    return dot >= 0 and name[dot:].lower() in SUFFIXES


def decode_base64(data: str) -> bytes:
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise ImageError("its data is not valid base64") from None


def prepare(raw: bytes) -> PreparedImage:
    """The image as the API takes it: unchanged when within the limits, else downscaled to 1568
    px on its long edge (and re-encoded as PNG, or JPEG when that is still too large)."""
    if len(raw) > MAX_FILE_BYTES:
        raise ImageError(f"it is over {MAX_FILE_BYTES // (1024 * 1024)} MB")
    try:
        # Only these four decoders: another format's may run a program (EPS runs Ghostscript)
        # on a repository's file named like a picture.
        with Image.open(io.BytesIO(lenient_png(raw)), formats=tuple(FORMATS)) as image:
            kind = image.format or ""
            media_type = FORMATS.get(kind)
            if media_type is None:
                raise ImageError(f"it is {kind or 'an unknown format'}, not PNG, JPEG, GIF or WebP")
            width, height = image.size
            if width * height > MAX_PIXELS:
                raise ImageError(f"it is {width}x{height} pixels, too many to decode")
            image.load()
            encoded = base64.b64encode(raw).decode("ascii")
            if max(width, height) <= MAX_SIDE and len(encoded) <= MAX_IMAGE_BASE64:
                return PreparedImage(media_type, encoded, width, height)
            return _downscale(image, (width, height))
    except (UnidentifiedImageError, Image.DecompressionBombError):
        raise ImageError("it is not an image (or not one of PNG, JPEG, GIF, WebP)") from None
    except (OSError, SyntaxError, ValueError) as exc:
        if isinstance(exc, ImageError):
            raise
        raise ImageError(f"it is corrupt or truncated ({exc})") from None


def _downscale(image: Image.Image, size: tuple[int, int]) -> PreparedImage:
    frame = ImageOps.exif_transpose(image)
    frame.thumbnail((LONG_EDGE, LONG_EDGE), Image.Resampling.LANCZOS)
    if frame.mode not in ("RGB", "RGBA", "L", "LA"):
        frame = frame.convert("RGBA" if "transparency" in frame.info else "RGB")
    out = io.BytesIO()
    frame.save(out, format="PNG", optimize=True)
    media_type = "image/png"
    if len(out.getvalue()) * 4 // 3 > MAX_IMAGE_BASE64:
        out = io.BytesIO()
        frame.convert("RGB").save(out, format="JPEG", quality=85)
        media_type = "image/jpeg"
    data = base64.b64encode(out.getvalue()).decode("ascii")
    return PreparedImage(media_type, data, frame.width, frame.height, scaled_from=size)


def describe(image: PreparedImage) -> str:
    size = f"{image.width}x{image.height}"
    if image.scaled_from is not None:
        w, h = image.scaled_from
        size += f", downscaled from {w}x{h}"
    return f"{image.media_type}, {size}"
