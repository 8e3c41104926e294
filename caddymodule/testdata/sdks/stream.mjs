// Streams one answer through the gateway with an official client SDK and
// prints what the application sees, as one JSON line:
// {"text": <the streamed text>, "error": null | {"name", "message", "status"}}.
//
//   node stream.mjs <sdk> <gateway base URL> <prompt>
//
// sdk is one of genai (Google's @google/genai, streamGenerateContent with
// alt=sse), ollama (ollama-js, /api/chat), ai-chat and ai-responses (the
// Vercel ai SDK's streamText with @ai-sdk/openai's Chat Completions and
// Responses models). An error is reported as the SDK raised it, so the Go
// test can tell an API error from a parse or validation error.
import { GoogleGenAI } from '@google/genai';
import { Ollama } from 'ollama';
import { streamText } from 'ai';
import { createOpenAI } from '@ai-sdk/openai';

const [sdk, base, prompt] = process.argv.slice(2);

// text is what the application received before the stream ended or failed.
let text = '';

function describe(err) {
  if (err == null) return null;
  if (err instanceof Error) {
    return { name: err.name, message: err.message, status: err.status ?? err.statusCode ?? null };
  }
  // The ai SDK hands a provider's streamed error on as the object it parsed.
  return { name: typeof err, message: String(err.message ?? JSON.stringify(err)), status: err.statusCode ?? null };
}

async function genai() {
  const ai = new GoogleGenAI({ apiKey: 'gemini-test', httpOptions: { baseUrl: base, apiVersion: 'v1' } });
  const stream = await ai.models.generateContentStream({ model: 'gemini-test', contents: prompt });
  for await (const chunk of stream) {
    text += chunk.text ?? '';
  }
}

async function ollama() {
  const client = new Ollama({ host: base + '/v1' });
  const stream = await client.chat({ model: 'llama-test', stream: true, messages: [{ role: 'user', content: prompt }] });
  for await (const part of stream) {
    text += part.message?.content ?? '';
  }
}

// StreamPartError carries an error the ai SDK delivered as a stream part.
class StreamPartError extends Error {
  constructor(part) {
    super('stream error part');
    this.part = part;
  }
}

async function vercel(api) {
  const openai = createOpenAI({ baseURL: base + '/v1', apiKey: 'sk-test' });
  const model = api === 'chat' ? openai.chat('gpt-test') : openai.responses('gpt-test');
  const result = streamText({ model, prompt, maxRetries: 0, onError: () => {} });
  for await (const part of result.fullStream) {
    if (part.type === 'text-delta') text += part.text;
    if (part.type === 'error') throw new StreamPartError(part.error);
  }
}

const runs = { genai, ollama, 'ai-chat': () => vercel('chat'), 'ai-responses': () => vercel('responses') };

let out;
try {
  if (!runs[sdk]) throw new Error(`unknown sdk ${sdk}`);
  await runs[sdk]();
  out = { text, error: null };
} catch (err) {
  out = { text, error: describe(err instanceof StreamPartError ? err.part : err) };
}
process.stdout.write(JSON.stringify(out) + '\n');
