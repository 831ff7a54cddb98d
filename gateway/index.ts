// `claude-temporal-orchestrator/gateway`: the HTTP/SSE gateway and its chat page, on a server of its own
// (startGateway) or mounted in a service's own (createGatewayHandler: node:http, or a framework's middleware), and
// its configuration from the environment (loadGatewayConfig, runGateway: what the command runs).
export {
  createGatewayHandler,
  type Gateway,
  type GatewayHandler,
  type GatewayOptions,
  startGateway,
} from './gateway-server';
export { type GatewayConfig, type GatewayToken, loadGatewayConfig } from './gateway-config';
export { runGateway } from './main';
