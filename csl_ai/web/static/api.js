// The JSON API under /api/: every failure becomes an ApiError with a readable message.

export class ApiError extends Error {
  constructor(message, status = 0, kind = null) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.kind = kind;
  }
}

async function parseBody(response) {
  const text = await response.text();
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return { message: text.slice(0, 300) };
  }
}

/** Call the API: `method` and `path` (under /api), an optional JSON body. */
export async function api(method, path, body = undefined) {
  const init = { method, headers: { Accept: "application/json" } };
  // The server refuses a state-changing request without a JSON content type, body or not.
  if (method !== "GET" && method !== "HEAD") init.headers["Content-Type"] = "application/json";
  if (body !== undefined) init.body = typeof body === "string" ? body : JSON.stringify(body);
  let response;
  try {
    response = await fetch(`/api${path}`, init);
  } catch (error) {
    throw new ApiError(`cannot reach the server (${error.message || error})`);
  }
  const data = await parseBody(response);
  if (!response.ok) {
    const error = data && data.error;
    const message = (error && error.message) || (data && data.message) || `${response.status} ${response.statusText}`;
    throw new ApiError(String(message), response.status, error && error.kind);
  }
  return data;
}

/** Offer a JSON value (or text) to the user as a file download. */
export function download(filename, content) {
  const text = typeof content === "string" ? content : `${JSON.stringify(content, null, 2)}\n`;
  const url = URL.createObjectURL(new Blob([text], { type: "application/json" }));
  const link = document.createElement("a");
  link.href = url;
  link.download = filename;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/** The text of a file the user picked, or null when none was picked. */
export function readFile(input) {
  const file = input.files && input.files[0];
  if (!file) return Promise.resolve(null);
  return file.text();
}

export const sleep = (ms) => new Promise((resolve) => { setTimeout(resolve, ms); });

/** Fetch a JSON file from the API and offer it as a download under the server's name. */
export async function downloadFrom(path, fallbackName) {
  let response;
  try {
    response = await fetch(`/api${path}`, { headers: { Accept: "application/json" } });
  } catch (error) {
    throw new ApiError(`cannot reach the server (${error.message || error})`);
  }
  const text = await response.text();
  if (!response.ok) {
    let message = `${response.status} ${response.statusText}`;
    try {
      const data = JSON.parse(text);
      message = (data.error && data.error.message) || message;
    } catch {
      // not JSON: keep the status line
    }
    throw new ApiError(message, response.status);
  }
  const disposition = response.headers.get("Content-Disposition") || "";
  const match = /filename="?([^";]+)"?/.exec(disposition);
  download(match ? match[1] : fallbackName, text);
  return text;
}

/** Show a message (an error, or text) in the page's error banner (#error-banner). */
export function showError(error) {
  const message = typeof error === "string" ? error : error && error.message ? error.message : String(error);
  document.getElementById("error-text").textContent = message;
  document.getElementById("error-banner").classList.remove("hidden");
}

/** Hide the page's error banner. */
export function hideError() {
  document.getElementById("error-banner").classList.add("hidden");
}
