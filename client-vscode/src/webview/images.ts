// Images pasted or dropped into the prompt box: a thumbnail chip each (removable) until the prompt
// is sent with them; and the thumbnails of a sent prompt's images in the transcript.
import type { PromptImage } from '../model/messages';

/** What the model reads; the server downsizes one past the API's limits. */
export const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'];
/** Larger files are refused here (the server would only downsize them). */
export const MAX_IMAGE_BYTES = 20 * 1024 * 1024;
export const MAX_IMAGES = 8;

export function dataUrl(image: PromptImage): string {
  return `data:${image.mimeType};base64,${image.data}`;
}

/** A data: URL as an image, or null when it is not a base64 one of the four types. */
export function fromDataUrl(url: string): PromptImage | null {
  const match = /^data:([^;,]+);base64,([A-Za-z0-9+/=]+)$/.exec(url);
  if (!match || !IMAGE_TYPES.includes(match[1])) return null;
  return { mimeType: match[1], data: match[2] };
}

/** Why a file is not attached, or null when it can be. */
export function refusal(file: { name: string; type: string; size: number }, attached: number): string | null {
  const name = file.name || 'the pasted image';
  if (!IMAGE_TYPES.includes(file.type)) return `${name} is not a PNG, JPEG, GIF or WebP image`;
  if (file.size > MAX_IMAGE_BYTES) return `${name} is over ${MAX_IMAGE_BYTES / (1024 * 1024)} MB`;
  if (attached >= MAX_IMAGES) return `at most ${MAX_IMAGES} images go with one prompt`;
  return null;
}

function readAsDataUrl(file: Blob): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result));
    reader.onerror = () => reject(reader.error ?? new Error('unreadable'));
    reader.readAsDataURL(file);
  });
}

/** The files of a paste or a drop. */
function filesOf(data: DataTransfer | null): File[] {
  if (!data) return [];
  return [...data.items].filter((i) => i.kind === 'file').flatMap((i) => i.getAsFile() ?? []);
}

/** The chips above the prompt box; `take()` hands the images over when the prompt is sent. */
export class ImageTray {
  readonly element: HTMLElement;
  private images: PromptImage[] = [];

  constructor(
    box: HTMLTextAreaElement,
    private readonly refused: (message: string) => void,
  ) {
    this.element = document.createElement('div');
    this.element.id = 'images';
    this.element.className = 'image-tray';
    this.element.hidden = true;
    box.before(this.element);
    box.addEventListener('paste', (e) => {
      const files = filesOf(e.clipboardData);
      if (!files.length) return;
      e.preventDefault();
      void this.attach(files);
    });
    box.addEventListener('dragover', (e) => {
      if (e.dataTransfer?.types.includes('Files')) e.preventDefault();
    });
    box.addEventListener('drop', (e) => {
      const files = filesOf(e.dataTransfer);
      if (!files.length) return;
      e.preventDefault();
      void this.attach(files);
    });
  }

  get count(): number {
    return this.images.length;
  }

  async attach(files: File[]): Promise<void> {
    for (const file of files) {
      const why = refusal(file, this.images.length);
      if (why) {
        this.refused(`Not attached: ${why}.`);
        continue;
      }
      const image = fromDataUrl(await readAsDataUrl(file));
      if (image) this.images.push(image);
      else this.refused(`Not attached: ${file.name || 'the image'} could not be read.`);
    }
    this.render();
  }

  take(): PromptImage[] {
    const taken = this.images;
    this.images = [];
    this.render();
    return taken;
  }

  private render(): void {
    this.element.replaceChildren(
      ...this.images.map((image, index) => {
        const chip = document.createElement('span');
        chip.className = 'image-chip';
        const img = document.createElement('img');
        img.src = dataUrl(image);
        img.alt = `Image ${index + 1}`;
        const remove = document.createElement('button');
        remove.className = 'secondary image-remove';
        remove.title = 'Remove this image';
        remove.setAttribute('aria-label', `Remove image ${index + 1}`);
        remove.textContent = '×';
        remove.addEventListener('click', () => {
          this.images.splice(index, 1);
          this.render();
        });
        chip.append(img, remove);
        return chip;
      }),
    );
    this.element.hidden = this.images.length === 0;
  }
}

/** A sent prompt's images in the transcript. */
export function thumbnails(urls: string[]): HTMLElement {
  const row = document.createElement('div');
  row.className = 'user-images';
  urls.forEach((url, index) => {
    if (!url.startsWith('data:image/')) return;
    const img = document.createElement('img');
    img.src = url;
    img.alt = `Image ${index + 1}`;
    row.append(img);
  });
  return row;
}
