/**
 * Keeps a broken panel from blanking the page: a render error inside shows a readable message with a retry
 * button in place of the panel, and the rest of the studio goes on working.
 */
import { Component, type ReactNode } from 'react';
import { Notice } from './Notice';

type Props = { name: string; children: ReactNode };
type State = { error: Error | null };

export class PanelErrorBoundary extends Component<Props, State> {
  override state: State = { error: null };

  static getDerivedStateFromError(error: unknown): State {
    return { error: error instanceof Error ? error : new Error(String(error)) };
  }

  override componentDidCatch(error: unknown): void {
    console.error(`[shuttle] the ${this.props.name} panel failed to render`, error);
  }

  override render() {
    const { error } = this.state;
    if (!error) return this.props.children;
    return (
      <Notice
        tone="danger"
        title={`The ${this.props.name} panel failed`}
        testId="panel.error"
        action={{ label: 'Try again', onClick: () => this.setState({ error: null }) }}
      >
        {error.name}: {error.message}
      </Notice>
    );
  }
}
