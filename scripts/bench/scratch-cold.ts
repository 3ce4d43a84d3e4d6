import { coldStarts } from "./cold-start.ts";
const env = { PATH: process.env.PATH!, HOME: "/tmp", STORE_ENDPOINT_URL: "http://127.0.0.1:1", AWS_ACCESS_KEY_ID: "x", AWS_SECRET_ACCESS_KEY: "y", AWS_REGION: "us-east-1" };
const [a, b] = await coldStarts([["/tmp/old.bin"], ["dist/store-mcp-server"]], env, 21);
console.log(`before ${a!.toFixed(1)} ms, with the view ${b!.toFixed(1)} ms`);
