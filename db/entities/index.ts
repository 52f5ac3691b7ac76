import { AnalysisJob } from './AnalysisJob.ts';
import { ApiKey, apiKeyAccessTypes } from './ApiKey.ts';
import { AuthSession } from './AuthSession.ts';
import { BillingAccount } from './BillingAccount.ts';
import { BrowserDownload } from './BrowserDownload.ts';
import { BrowserHost } from './BrowserHost.ts';
import { BrowserSession } from './BrowserSession.ts';
import { ExternalIdentity } from './ExternalIdentity.ts';
import { ExternalLinkRequest } from './ExternalLinkRequest.ts';
import { ExternalRegistration } from './ExternalRegistration.ts';
import { FunctionVersion } from './FunctionVersion.ts';
import { GenerationJob } from './GenerationJob.ts';
import { LedgerEntry } from './LedgerEntry.ts';
import { LogEntry } from './LogEntry.ts';
import { LogStream } from './LogStream.ts';
import { Mail } from './Mail.ts';
import { McpClientConfig } from './McpClientConfig.ts';
import { McpServer } from './McpServer.ts';
import { OneTimeToken } from './OneTimeToken.ts';
import { Pipeline } from './Pipeline.ts';
import { PipelineFunction } from './PipelineFunction.ts';
import { PipelineRun, screenshotModes } from './PipelineRun.ts';
import { PipelineVersion } from './PipelineVersion.ts';
import { Project } from './Project.ts';
import { RateLimitBucket } from './RateLimitBucket.ts';
import { RecoveryCode } from './RecoveryCode.ts';
import { RunScreenshot, type ScreenshotBox, screenshotKinds } from './RunScreenshot.ts';
import { SessionResource } from './SessionResource.ts';
import { StoredBlob } from './StoredBlob.ts';
import { StoredProxy } from './StoredProxy.ts';
import { StripeEvent } from './StripeEvent.ts';
import { Subscription } from './Subscription.ts';
import { UsageRecord, type UsageUnit, usageUnits } from './UsageRecord.ts';
import { User } from './User.ts';
import { WarmBrowser } from './WarmBrowser.ts';
import { type WebhookAttempt, WebhookDelivery } from './WebhookDelivery.ts';
import { WebhookEndpoint } from './WebhookEndpoint.ts';

export {
  AnalysisJob,
  ApiKey,
  AuthSession,
  apiKeyAccessTypes,
  BillingAccount,
  BrowserDownload,
  BrowserHost,
  BrowserSession,
  ExternalIdentity,
  ExternalLinkRequest,
  ExternalRegistration,
  FunctionVersion,
  GenerationJob,
  LedgerEntry,
  LogEntry,
  LogStream,
  Mail,
  McpClientConfig,
  McpServer,
  OneTimeToken,
  Pipeline,
  PipelineFunction,
  PipelineRun,
  PipelineVersion,
  Project,
  RateLimitBucket,
  RecoveryCode,
  RunScreenshot,
  type ScreenshotBox,
  SessionResource,
  StoredBlob,
  StoredProxy,
  StripeEvent,
  Subscription,
  screenshotKinds,
  screenshotModes,
  UsageRecord,
  type UsageUnit,
  User,
  usageUnits,
  WarmBrowser,
  type WebhookAttempt,
  WebhookDelivery,
  WebhookEndpoint,
};

/** Every entity; the ORM config and the migration snapshot take this list. */
export const entities = [
  User,
  AuthSession,
  OneTimeToken,
  Project,
  ApiKey,
  ExternalIdentity,
  Mail,
  StoredProxy,
  BrowserSession,
  SessionResource,
  BrowserHost,
  LogStream,
  LogEntry,
  UsageRecord,
  RecoveryCode,
  RateLimitBucket,
  ExternalRegistration,
  ExternalLinkRequest,
  Pipeline,
  PipelineVersion,
  AnalysisJob,
  GenerationJob,
  PipelineRun,
  PipelineFunction,
  FunctionVersion,
  McpServer,
  McpClientConfig,
  WarmBrowser,
  BillingAccount,
  Subscription,
  LedgerEntry,
  StripeEvent,
  WebhookEndpoint,
  WebhookDelivery,
  RunScreenshot,
  StoredBlob,
  BrowserDownload,
];
